"""``nlgscore meta select-model``: Hits@1, MRR and Diff over hybrid systems (BERTScore paper, Sec. 4),
and score files of lower-is-better metrics (``--lower-is-better NAME``, TER's ``lower_is_better``).

Model selection is checked against a transcription of the paper's procedure written here (hybrids
from two random systems, then the metric's pick among sampled hybrids), with the draws of the
library's generator; lower-is-better against the same scores negated by hand and against
sacreBLEU's TER."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

sacrebleu = pytest.importorskip("sacrebleu")

from nlgscore.cli import main  # noqa: E402
from nlgscore.errors import ArgumentError  # noqa: E402
from nlgscore.meta.stats.wmt import hybrid_systems  # noqa: E402
from nlgscore.meta.tasks import mqm, wmt19, wmt21  # noqa: E402
from nlgscore.meta.tasks.select_model import SelectModel  # noqa: E402
from nlgscore.meta.tasks.wmt21_da import load_wmt21_set  # noqa: E402

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
LINES = 6
RNG = np.random.default_rng(11)
HUMAN = RNG.normal(size=(len(SYSTEMS), LINES))
METRIC = HUMAN + RNG.normal(scale=0.7, size=HUMAN.shape)
REFS = ["the cat sat on the mat", "a dog ran", "it rains", "she reads a book", "we eat rice", "go home"]


def _folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "src.xx").write_text("".join(f"s{i}\n" for i in range(LINES)), encoding="utf-8")
    (folder / "ref.A.en").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    rows = []
    for s, system in enumerate(SYSTEMS):
        words = [" ".join(ref.split()[: s + 1]) for ref in REFS]  # s1 shortest ... s5 longest
        (folder / f"hyp.{system}.en").write_text("\n".join(words) + "\n", encoding="utf-8")
        rows += [f"{system}\t{line + 1}\t{float(HUMAN[s, line])!r}" for line in range(LINES)]
    (folder / "mqm-seg-scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _scores(path: Path, values: np.ndarray) -> str:
    path.write_text("".join(f"{s}\t{v!r}\n" for s, row in zip(SYSTEMS, values.tolist()) for v in row))
    return str(path)


def _values(table):
    return {(r.metric, r.level, r.measure): r.value for r in table.rows}


def reference_selection(human_hybrids, metric_hybrids, sample_size, repeats, seed):
    """The paper's model selection, one draw at a time: the draws of the library's generator (the
    ``sample_size`` smallest of uniform keys), the metric's pick, its human rank and the loss."""
    rng = np.random.default_rng(seed)
    hits, reciprocal, diff = [], [], []
    for _ in range(repeats):
        keys = rng.random((1, human_hybrids.size))[0]
        drawn = np.argpartition(keys, sample_size - 1)[:sample_size]
        pick = drawn[np.argmax(metric_hybrids[drawn])]
        rank = 1 + sum(human_hybrids[d] > human_hybrids[pick] for d in drawn)
        hits.append(rank == 1)
        reciprocal.append(1 / rank)
        diff.append(human_hybrids[drawn].max() - human_hybrids[pick])
    return np.mean(hits), np.mean(reciprocal), np.mean(diff)


def reference_hybrids(human, metric, n, seed):
    """Hybrid super-sampling transcribed (Graham and Liu 2016): two distinct random systems, each
    segment from one of them at random; human and metric scores the means of the sampled segments."""
    rng = np.random.default_rng(seed)
    first = rng.integers(human.shape[0], size=n)
    second = (first + rng.integers(1, human.shape[0], size=n)) % human.shape[0]
    take = rng.integers(2, size=(n, human.shape[1]), dtype=bool)
    chosen = np.where(take, first[:, None], second[:, None])
    columns = np.arange(human.shape[1])
    return np.array([np.mean(human[c, columns]) for c in chosen]), np.array(
        [np.mean(metric[c, columns]) for c in chosen]
    )


def test_select_model_equals_the_papers_procedure(tmp_path):
    folder = _folder(tmp_path / "set")
    settings = SelectModel(hybrids=300, sample_size=20, repeats=200, seed=5)
    table = mqm(folder, scores={"m": _scores(tmp_path / "m.seg.score", METRIC)}, select_model=settings)
    values = _values(table)
    assert [r.measure for r in table.rows] == ["hits@1", "mrr", "diff"] and {r.level for r in table.rows} == {"hybrid"}
    human_h, metric_h = reference_hybrids(HUMAN, METRIC, 300, 5)
    library = hybrid_systems(HUMAN, METRIC, 300, seed=5)
    np.testing.assert_allclose(library[0], human_h, rtol=0, atol=1e-12)  # mean vs nansum/count: summation order
    hits, mrr, diff = reference_selection(library[0], library[1], 20, 200, 5)
    assert values["m", "hybrid", "hits@1"] == hits and values["m", "hybrid", "mrr"] == pytest.approx(mrr, abs=1e-12)
    assert values["m", "hybrid", "diff"] == pytest.approx(diff, abs=1e-12)  # sums in another order
    assert "|hybrids:300|sample:20|repeats:200|seed:5" in table.rows[0].signature
    # the human scores as the metric pick the human best every time; their negation almost never
    perfect = mqm(folder, scores={"h": _scores(tmp_path / "h.seg.score", HUMAN)}, select_model=settings)
    assert [r.value for r in perfect.rows] == [1.0, 1.0, 0.0]
    worst = _values(mqm(folder, scores={"w": _scores(tmp_path / "w.seg.score", -HUMAN)}, select_model=settings))
    assert worst["w", "hybrid", "hits@1"] == 0.0
    # ... unless the file says its metric is lower-is-better
    turned = mqm(
        folder, scores={"w": _scores(tmp_path / "w.seg.score", -HUMAN)}, select_model=settings, lower_is_better=["w"]
    )
    assert [r.value for r in turned.rows] == [1.0, 1.0, 0.0]


def test_select_model_command_on_the_shared_wmt21_folder(tmp_path, capsys):
    folder = SHARED / "wmt21-de-en"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found (../shared/data)")
    out = tmp_path / "sel.json"
    args = ["meta", "select-model", "wmt21", "--data", str(folder), "--metric", "chrf", "--limit", "40"]
    code = main(
        args
        + ["--hybrids", "200", "--sample-size", "10", "--repeats", "100", "--seed", "3"]
        + ["--no-cache", "--quiet", "--json-out", str(out)]
    )
    rows = json.loads(out.read_text())["results"]
    assert code == 0 and [(r["level"], r["measure"]) for r in rows] == [
        ("hybrid", m) for m in ("hits@1", "mrr", "diff")
    ]
    # WMT21's hybrids average the segments' z scores (NaN where unjudged); the metric is sentence chrF
    data = load_wmt21_set(folder, limit=40)
    seg = np.array([[sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(row, data.refs[0])] for row in data.hyps])
    human_h, metric_h = hybrid_systems(data.human["z"], seg, 200, seed=3)
    hits, mrr, diff = reference_selection(human_h, metric_h, 10, 100, 3)
    assert rows[0]["value"] == hits and rows[1]["value"] == pytest.approx(mrr, abs=1e-12)
    assert rows[2]["value"] == pytest.approx(diff, abs=1e-12)
    code = main(["meta", "select-model", "wmt21", "--data", str(folder), "--metric", "chrf", "--sample-size", "1"])
    assert code == 2 and "--sample-size" in capsys.readouterr().err


def test_select_model_settings_are_checked():
    with pytest.raises(ArgumentError, match="sample_size .* at most hybrids"):
        SelectModel(hybrids=10, sample_size=50)
    with pytest.raises(ArgumentError, match="repeats must be an integer >= 1"):
        SelectModel(repeats=0)


def test_lower_is_better_scores_give_the_rows_of_their_negation(tmp_path, capsys):
    folder = _folder(tmp_path / "set")
    higher = _values(mqm(folder, scores={"m": _scores(tmp_path / "a.seg.score", METRIC)}, permutations=0))
    lower = mqm(folder, scores={"m": _scores(tmp_path / "b.seg.score", -METRIC)}, permutations=0, lower_is_better=["m"])
    assert _values(lower) == higher and all(r.signature.endswith("|lower-is-better:negated") for r in lower.rows)
    # TER (the registry says lower_is_better) is turned without being told: sacreBLEU's TER negated
    ter = _values(mqm(folder, ["ter"], permutations=0))
    values = np.array([[sacrebleu.sentence_ter(h, [r]).score for h, r in zip(hyps, REFS)] for hyps in _hyps(folder)])
    by_hand = _values(mqm(folder, scores={"ter": _scores(tmp_path / "t.seg.score", -values)}, permutations=0))
    for key, value in by_hand.items():
        if key[1] == "segment":  # system TER is sacreBLEU's corpus TER, not the mean: segment rows only
            assert ter[key] == value, key
    expected = scipy_stats.pearsonr(HUMAN.ravel(), -values.ravel()).statistic
    assert ter["ter", "segment", "pearson"] == pytest.approx(expected, abs=1e-12)
    code = main(["meta", "mqm", "--data", str(folder), "--metric", "chrf", "--lower-is-better", "nope", "--quiet"])
    assert code == 2 and "lower_is_better (--lower-is-better) names ['nope']" in capsys.readouterr().err


def _hyps(folder: Path):
    return [(folder / f"hyp.{s}.en").read_text(encoding="utf-8").splitlines() for s in SYSTEMS]


def test_lower_is_better_on_darr_pairs_and_wmt21(tmp_path):
    pairs = [
        {
            "id": i,
            "lp": "xx-en",
            "src": "s",
            "ref": "the cat sat",
            "better": {"system": "A", "text": "the cat sat"},
            "worse": {"system": "B", "text": t},
        }
        for i, t in enumerate(["a dog", "the cat", "cat sat the", "the cat sat"])
    ]
    (tmp_path / "wmt-xx-en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    errors = [(0.1, 0.9), (0.2, 0.1), (0.5, 0.5), (0.0, 0.3)]  # error rates: concordant when better < worse
    path = tmp_path / "err.jsonl"
    path.write_text("".join(json.dumps({"id": i, "better": b, "worse": w}) + "\n" for i, (b, w) in enumerate(errors)))
    plain = _values(wmt19(tmp_path, scores={"err": str(path)}, bootstrap=0))
    turned = _values(wmt19(tmp_path, scores={"err": str(path)}, bootstrap=0, lower_is_better=["err"]))
    # Kendall's tau-like by its definition (C - D) / (C + D), a tie discordant (WMT17-19)
    concordant = [b < w for b, w in errors]
    assert turned["err", "segment", "tau"] == (2 * sum(concordant) - len(errors)) / len(errors) == 0.0
    assert plain["err", "segment", "tau"] == (2 * sum(b > w for b, w in errors) - len(errors)) / len(errors)
    folder = SHARED / "wmt21-de-en"
    if folder.is_dir():
        ter = _values(wmt21(folder, metrics=["ter"], bootstrap=0, limit=8))
        data = load_wmt21_set(folder, limit=8)
        corpus = [sacrebleu.corpus_ter(h, [data.refs[0]]).score for h in data.hyps]
        expected = scipy_stats.pearsonr(data.human["system"], -np.array(corpus)).statistic
        assert ter["ter", "system", "pearson-z"] == pytest.approx(expected, abs=1e-12)
