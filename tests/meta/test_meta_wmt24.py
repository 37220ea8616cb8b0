"""``nlgscore meta wmt24`` / ``wmt25`` on two-pair test sets built in the test (mt-metrics-eval's folder
layout and WMT25's paragraph JSONL): SPA, acc-eq, PDP per pair, avg-corr and average rank over the
pairs, significance clusters, --scores files equal to --metric, --json, --export-scores and the cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sacrebleu")

from nlgscore.cli import main
from nlgscore.meta import stats
from nlgscore.meta.engine import ScoreCache, Scorers
from nlgscore.meta.tasks.wmt24_25 import wmt24, wmt25

REFS = [
    "the cat sat on the mat",
    "a dog ran in the park",
    "it is raining today",
    "she reads a good book",
    "we walk to school",
    "the sun is hot",
]
SYSTEMS = {  # (output per line, human score per line): better outputs get higher ESA scores, with noise
    "good": ([r.replace("the ", "a ", 1) for r in REFS], [90, 85, 95, 80, 88, 91]),
    "mid": ([" ".join(r.split()[:3]) for r in REFS], [60, 70, 55, 65, 72, 50]),
    "bad": ([r.split()[1] for r in REFS], [30, 20, 35, 40, 25, 33]),
    "worst": (["x y"] * len(REFS), [5, 10, 0, 8, 3, 1]),
}


def _tree(root: Path, lps=("en-cs", "en-ru")) -> Path:
    for k, lp in enumerate(lps):
        files = {
            f"sources/{lp}.txt": ["CANARY", *(f"src {i}" for i in range(6)), "unrated"],
            f"references/{lp}.refA.txt": ["CANARY", *REFS, "unrated"],
            f"documents/{lp}.docs": ["canary\tcanary", *(f"news\td{i // 3}" for i in range(6)), "news\td2"],
        }
        files.update({f"system-outputs/{lp}/{s}.txt": ["CANARY", *out, "unrated"] for s, (out, _) in SYSTEMS.items()})
        files[f"human-scores/{lp}.esa.seg.score"] = [
            f"{s}\t{v}" for s, (_, h) in SYSTEMS.items() for v in (100.0, *(x + k for x in h), "None")
        ]
        for name, lines in files.items():
            (root / "wmt24" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "wmt24" / name).write_text("\n".join(map(str, lines)) + "\n", encoding="utf-8")
    return root


def _values(table):
    return {(r.dataset, r.metric, r.measure): r.value for r in table.rows}


def test_pairs_avg_corr_ranks_and_clusters(tmp_path):
    root = _tree(tmp_path / "mtme")
    table = wmt24(root, ["chrf", "bleu"], permutations=200)
    values = _values(table)
    for lp in ("en-cs", "en-ru"):
        human = np.array([[100.0, *(x + (lp == "en-ru") for x in h)] for _, h in SYSTEMS.values()])
        for metric in ("chrf", "bleu"):
            assert 0 <= values[f"wmt24-{lp}", metric, "spa"] <= 1 and 0 <= values[f"wmt24-{lp}", metric, "acc-eq"] <= 1
            assert -1 <= values[f"wmt24-{lp}", metric, "pdp"] <= 1
        assert human.shape == (4, 7)  # the unrated last line is not an item
    for metric in ("chrf", "bleu"):  # avg-corr: the mean of the four tasks (all in [0, 1], equal weights)
        tasks = [values[f"wmt24-{lp}", metric, m] for lp in ("en-cs", "en-ru") for m in ("spa", "acc-eq")]
        assert values["all", metric, "avg-corr"] == pytest.approx(np.mean(tasks), abs=1e-12)  # summation order only
        assert 1 <= values["all", metric, "avg-rank"] <= 2
    assert sum("clusters:" in n for n in table.notes) == 4 and any(
        n.startswith("avg-corr over 4 tasks") for n in table.notes
    )


def test_zero_permutations_rank_by_value_as_mtme(tmp_path):
    """mt-metrics-eval with k=0 leaves the significance matrix at 0: every gap counts, ranks follow the values."""
    table = wmt24(_tree(tmp_path / "mtme", ("en-cs",)), ["chrf", "bleu"], permutations=0)
    values = _values(table)
    order = sorted(("chrf", "bleu"), key=lambda m: -values["wmt24-en-cs", m, "spa"])
    assert values["all", order[0], "avg-rank"] <= values["all", order[1], "avg-rank"]
    assert not any("clusters:" in n for n in table.notes)


def test_cli_json_export_scores_template_and_cache(tmp_path, capsys):
    root = _tree(tmp_path / "mtme")
    cache, export = tmp_path / "cache", tmp_path / "export"
    args = [
        "meta",
        "wmt24",
        "--data",
        str(root),
        "--metric",
        "chrf",
        "--permutations",
        "0",
        "--quiet",
        "--cache",
        str(cache),
    ]
    assert main(args + ["--json", "--export-scores", str(export)]) == 0
    first = json.loads(capsys.readouterr().out)
    rows = {(r["dataset"], r["level"], r["measure"]): r["value"] for r in first["results"]}
    assert ("all", "overall", "avg-corr") in rows and ("wmt24-en-ru", "segment", "pdp") in rows
    assert (export / "en-cs" / "chrf-refA.seg.score").is_file() and (export / "en-ru" / "chrf-refA.seg.score").is_file()
    # the exported files read back with --scores ({lp}: one file per pair) give the same numbers
    again = wmt24(root, scores={"chrf": str(export / "{lp}" / "chrf-refA.seg.score")}, permutations=0)
    assert {(r.dataset, r.measure): r.value for r in again.rows} == {(d, m): v for (d, _, m), v in rows.items()}
    # a re-run is served by the cache
    scorers = Scorers(cache=ScoreCache(cache))
    wmt24(root, ["chrf"], permutations=0, scorers=scorers)
    assert scorers.computed == 0 and scorers.cache.hits >= 2


def test_score_file_of_every_line_of_the_test_set(tmp_path):
    """An mt-metrics-eval metric file has one score per line of the test set; the unrated lines' scores
    are read and left out, as mtme leaves out cells without gold."""
    root = _tree(tmp_path / "mtme", ("en-cs",))
    reference = wmt24(root, ["chrf"], permutations=0)
    export = tmp_path / "export"
    wmt24(root, ["chrf"], permutations=0, export_scores=export)
    lines = (export / "en-cs" / "chrf-refA.seg.score").read_text().splitlines()
    full = []
    for system in SYSTEMS:
        own = [line for line in lines if line.startswith(system + "\t")]
        full += [*own, f"{system}\t0.123"]  # line 7 (unrated): any value
    path = tmp_path / "full.seg.score"
    path.write_text("\n".join(full) + "\n", encoding="utf-8")
    values = _values(wmt24(root, scores={"chrf": str(path)}, permutations=0))
    assert values == _values(reference)
    path.write_text("\n".join(full[:-2]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="full.seg.score:.*system 'worst' has 6 scores"):
        wmt24(root, scores={"chrf": str(path)}, permutations=0)


def test_wmt25_paragraph_jsonl(tmp_path, capsys):
    path = tmp_path / "wmt25-genmt-humeval.jsonl"
    records = [
        {
            "doc_id": f"{lp}_#_news_#_d{i // 3}",
            "src_text": f"src {i}",
            "tgt_text": {"refA": ref, **{s: out[i] for s, (out, _) in SYSTEMS.items()}},
            "scores": {s: {"human1": h[i], "errors1": []} for s, (_, h) in SYSTEMS.items()},
        }
        for lp in ("en-cs_CZ", "en-ja_JP")
        for i, ref in enumerate(REFS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    table = wmt25(path, ["chrf"], permutations=0)
    assert {r.dataset for r in table.rows} == {"wmt25-en-cs_CZ", "wmt25-en-ja_JP", "all"}
    assert (
        main(
            [
                "meta",
                "wmt25",
                "--data",
                str(path),
                "--lp",
                "en-cs_CZ",
                "--metric",
                "chrf",
                "--permutations",
                "0",
                "--no-cache",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "wmt25-en-cs_CZ" in out and "avg-corr" in out and "en-ja_JP" not in out.split("avg-corr over")[0]


def test_pdp_of_constant_human_scores_is_undefined_with_a_note(tmp_path, capsys):
    """Every system rated 50 on en-ja_JP: PDP has no value there (as in mt-metrics-eval, where a
    Pearson correlation with a constant side is NaN): the row is null / n/a with a note and a
    warning naming the pair, never a silent nan; en-cs_CZ's PDP is a number."""
    path = tmp_path / "wmt25-genmt-humeval.jsonl"
    records = [
        {
            "doc_id": f"{lp}_#_news_#_d{i // 3}",
            "src_text": f"src {i}",
            "tgt_text": {"refA": ref, **{s: out[i] for s, (out, _) in SYSTEMS.items()}},
            "scores": {s: {"human1": 50 if lp == "en-ja_JP" else h[i], "errors1": []} for s, (_, h) in SYSTEMS.items()},
        }
        for lp in ("en-cs_CZ", "en-ja_JP")
        for i, ref in enumerate(REFS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.warns(
        UserWarning, match="wmt25-en-ja_JP segment pdp is undefined for chrf: the human scores are constant"
    ):
        table = wmt25(path, ["chrf"], permutations=0)
    pdp = {r.dataset: r.value for r in table.rows if r.measure == "pdp"}
    assert np.isnan(pdp["wmt25-en-ja_JP"]) and np.isfinite(pdp["wmt25-en-cs_CZ"])
    text = str(table)
    [cell] = [line for line in text.splitlines() if line.startswith("wmt25-en-ja_JP") and " pdp " in line]
    assert cell.split()[-1] == "n/a" and "nan" not in text
    assert "n/a: wmt25-en-ja_JP segment pdp is undefined for chrf" in text and "not as 0" in text
    assert sum("en-cs_CZ segment pdp is undefined" in note for note in table.notes) == 0
    as_json = table.to_dict()
    assert [r["value"] for r in as_json["results"] if r["dataset"] == "wmt25-en-ja_JP" and r["measure"] == "pdp"] == [
        None
    ]
    args = ["meta", "wmt25", "--data", str(path), "--metric", "chrf", "--permutations", "0", "--no-cache"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "nlgscore: warning: wmt25-en-ja_JP segment pdp is undefined for chrf" in captured.err
    assert "n/a: wmt25-en-ja_JP segment pdp is undefined" in captured.out


def test_pdp_equals_pearson_of_intra_item_differences():
    human = np.array([[1.0, 5.0, 2.0], [2.0, np.nan, 3.0], [4.0, 3.0, np.nan]])
    metric = np.array([[0.1, 0.9, 0.4], [0.3, 0.5, 0.2], [0.6, 0.2, 0.8]])
    h, m = [], []
    for item in range(3):
        for a in range(3):
            for b in range(3):
                if not np.isnan(human[a, item]) and not np.isnan(human[b, item]):
                    h.append(human[b, item] - human[a, item])
                    m.append(metric[b, item] - metric[a, item])
    assert stats.pairwise_difference_pearson(human, metric) == pytest.approx(np.corrcoef(h, m)[0, 1], abs=1e-12)


def test_cli_export_mtme_and_csv(tmp_path, capsys):
    root = _tree(tmp_path / "mtme", ("en-cs",))
    csv = tmp_path / "out.csv"
    assert (
        main(
            [
                "meta",
                "wmt24",
                "--data",
                str(root),
                "--metric",
                "chrf",
                "--permutations",
                "0",
                "--no-cache",
                "--quiet",
                "--export-mtme",
                str(tmp_path / "mtme-out"),
                "--csv",
                str(csv),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert len((tmp_path / "mtme-out" / "en-cs" / "chrf-refA.seg.score").read_text().splitlines()) == 4 * 7
    assert "all,chrf,overall,avg-corr" in csv.read_text()
