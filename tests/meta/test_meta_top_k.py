"""Top-k systems (``--top-k K``): every system-level measure again over the K best systems by
human score. Checked three ways: against the same task run on a folder that holds only those K
systems, against scipy / the statistic's definition over the K systems picked here, and on the
shared WMT21, WMT24 and MQM data read in place (first lines only)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

sacrebleu = pytest.importorskip("sacrebleu")

from nlgscore.cli import main  # noqa: E402
from nlgscore.errors import ArgumentError, ArgumentTypeError  # noqa: E402
from nlgscore.meta import stats  # noqa: E402
from nlgscore.meta.stats.top_k import check_top_k, pairs_within, top_systems  # noqa: E402
from nlgscore.meta.tasks import mqm, wmt21, wmt24  # noqa: E402
from nlgscore.meta.tasks.wmt21_da import load_wmt21_set  # noqa: E402
from nlgscore.meta.tasks.wmt24_25 import _load as load_wmt24_set  # noqa: E402

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
SYSTEMS = ["s1", "s2", "s3", "s4", "s5", "s6"]
LINES = 5
RNG = np.random.default_rng(3)
HUMAN = RNG.normal(size=(len(SYSTEMS), LINES)) + np.arange(len(SYSTEMS))[::-1, None] * 0.1  # no system ties
METRIC = HUMAN + RNG.normal(scale=0.8, size=HUMAN.shape)


def _folder(folder: Path, systems) -> Path:
    """An MQM-style human-scores folder of ``systems`` (their rows of HUMAN), every line rated."""
    folder.mkdir()
    (folder / "src.xx").write_text("".join(f"s{i}\n" for i in range(LINES)), encoding="utf-8")
    (folder / "ref.A.en").write_text("".join(f"ref {i}\n" for i in range(LINES)), encoding="utf-8")
    rows = []
    for system in systems:
        (folder / f"hyp.{system}.en").write_text("".join(f"{system} {i}\n" for i in range(LINES)), encoding="utf-8")
        rows += [f"{system}\t{line + 1}\t{float(HUMAN[SYSTEMS.index(system), line])!r}" for line in range(LINES)]
    (folder / "mqm-seg-scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _scores(path: Path, systems, sign: float = 1.0) -> str:
    lines = [f"{s}\t{sign * v!r}\n" for s in systems for v in METRIC[SYSTEMS.index(s)].tolist()]
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def _values(table):
    return {(r.metric, r.level, r.measure): r.value for r in table.rows}


def test_top_systems_is_the_argsort_of_the_rated_systems():
    human = [0.3, np.nan, 0.9, 0.3, 0.1, 0.9]
    # reference: sort the rated rows by descending score, earlier row first among equal scores
    rated = [i for i, v in enumerate(human) if not np.isnan(v)]
    expected = sorted(rated, key=lambda i: (-human[i], i))
    for k in range(2, 7):
        assert top_systems(human, k).tolist() == expected[:k]
    assert pairs_within(["a", "b", "c"], ["c", "a", "b"], ["a", "c"]).tolist() == [True, False, False]
    assert check_top_k(4) == 4 and check_top_k(None) is None
    with pytest.raises(ArgumentError, match="top_k must be an integer >= 2"):
        check_top_k(1)
    with pytest.raises(ArgumentTypeError, match="top_k"):
        check_top_k("4")


def test_top_k_equals_the_measures_on_a_folder_of_the_k_best_systems(tmp_path):
    k = 3
    full = _folder(tmp_path / "full", SYSTEMS)
    table = mqm(full, scores={"m": _scores(tmp_path / "m.seg.score", SYSTEMS)}, permutations=0, top_k=k)
    values = _values(table)
    human_system = HUMAN.mean(axis=1)  # every line rated: the system score is the mean of its segments
    best = [SYSTEMS[i] for i in np.argsort(-human_system, kind="stable")[:k]]
    assert any(n.endswith(f"top-{k} systems by human score: {', '.join(best)}") for n in table.notes)
    alone = _folder(tmp_path / "best", best)
    direct = _values(mqm(alone, scores={"m": _scores(tmp_path / "b.seg.score", best)}, permutations=0))
    for measure in ("pearson", "accuracy", "spa"):
        assert values["m", "system", f"{measure}-top{k}"] == direct["m", "system", measure], measure
    rows = [SYSTEMS.index(s) for s in best]
    h, m = human_system[rows], METRIC[rows].mean(axis=1)
    assert values["m", "system", f"pearson-top{k}"] == pytest.approx(
        scipy_stats.pearsonr(h, m).statistic, abs=1e-12
    )  # one float reduction order apart
    agree = [np.sign(h[a] - h[b]) == np.sign(m[a] - m[b]) for a, b in itertools.combinations(range(k), 2)]
    assert values["m", "system", f"accuracy-top{k}"] == np.mean(agree)
    signs = stats.permutation_signs(LINES)
    assert values["m", "system", f"spa-top{k}"] == stats.soft_pairwise_accuracy(HUMAN[rows], METRIC[rows], signs)
    # segment-level measures get no top-k rows; the signature says the k
    assert not any(r.level == "segment" and "top" in r.measure for r in table.rows)
    assert all("|top-k:3" in r.signature for r in table.rows if r.measure.endswith("-top3"))


def test_top_k_on_the_shared_wmt21_folder_equals_scipy_over_the_best_systems():
    folder = SHARED / "wmt21-de-en"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found (../shared/data)")
    table = wmt21(folder, metrics=["chrf"], bootstrap=0, limit=60, top_k=4)
    data = load_wmt21_set(folder, limit=60)
    best = np.sort(np.argsort(-data.human["system"], kind="stable")[:4])  # in the data set's order
    chrf = [sacrebleu.corpus_chrf(data.hyps[i], [data.refs[0]]).score for i in best]
    expected = scipy_stats.pearsonr(data.human["system"][best], chrf).statistic
    assert _values(table)["chrf", "system", "pearson-z-top4"] == pytest.approx(expected, abs=1e-12)
    # daRR tau over the pairs of two top-4 systems, a metric tie discordant
    item, better, worse = data.derived("darr", lambda: None)
    seg = {i: [sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(data.hyps[i], data.refs[0])] for i in best}
    kept = [(i, b, w) for i, b, w in zip(item, better, worse) if b in seg and w in seg]
    concordant = sum(seg[b][i] > seg[w][i] for i, b, w in kept)
    assert kept and _values(table)["chrf", "segment", "tau-top4"] == (2 * concordant - len(kept)) / len(kept)


def test_top_k_on_the_shared_wmt24_and_mqm_data(tmp_path):
    folder = SHARED / "esa-wmt24-en-cs"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found (../shared/data)")
    table = wmt24(folder, metrics=["chrf"], permutations=0, limit=30, top_k=4)
    data = load_wmt24_set(folder, limit=30, lp="en-cs", test_set="wmt24")
    best = np.sort(np.argsort(-data.human["system"], kind="stable")[:4])  # in the data set's order
    seg = np.array([[sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(data.hyps[i], data.refs[0])] for i in best])
    human = data.human["segment"][best]
    common = (~np.isnan(human)).all(axis=0)
    expected = stats.soft_pairwise_accuracy(
        human[:, common], seg[:, common], stats.permutation_signs(int(common.sum()))
    )
    assert _values(table)["chrf", "system", "spa-top4"] == pytest.approx(expected, abs=1e-12)
    mqm_folder = SHARED / "mqm-wmt21-zh-en"
    if mqm_folder.is_dir():  # the CLI flag, on a second WMT task
        out = tmp_path / "out.json"
        code = main(
            ["meta", "mqm", "--data", str(mqm_folder), "--metric", "chrf", "--limit", "150", "--permutations", "0"]
            + ["--top-k", "4", "--no-cache", "--quiet", "--json-out", str(out)]
        )
        rows = json.loads(out.read_text())["results"]
        assert code == 0 and {r["measure"] for r in rows} >= {"pearson-top4", "accuracy-top4", "spa-top4"}


def test_top_k_refusals(tmp_path, capsys):
    folder = _folder(tmp_path / "full", SYSTEMS)
    scores = {"m": _scores(tmp_path / "m.seg.score", SYSTEMS)}
    with pytest.raises(ArgumentError, match="top_k must be an integer >= 2"):
        mqm(folder, scores=scores, permutations=0, top_k=1)
    code = main(["meta", "mqm", "--data", str(folder), "--scores", f"m={scores['m']}", "--top-k", "0", "--quiet"])
    assert code == 2 and "top_k must be an integer >= 2 (--top-k K" in capsys.readouterr().err
    # a data set without system-level human scores names it
    with pytest.raises(SystemExit):
        main(["meta", "wmt19", "--top-k", "4"])  # no such option: wmt19 daRR has no system level
    assert "unrecognized arguments: --top-k" in capsys.readouterr().err
