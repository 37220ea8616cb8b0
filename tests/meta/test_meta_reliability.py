"""Regression tests for the bad-input probe of the meta-evaluation:
human-score files checked like score files, the task API validated once with the CLI's messages,
empty SummEval references, one encoding rule, outputs checked before the work and written
atomically, BARTScore directions in one pass, short metric names, SummEval system rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sacrebleu")

from nlgscore.cli import main
from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError
from nlgscore.meta import tasks
from nlgscore.meta.data.loaders import load_darr, load_summeval
from nlgscore.meta.data.mtme import write_mtme
from nlgscore.meta.data.wmt21 import load_wmt21
from nlgscore.meta.engine import Scorers, short_name

REFS = ["the cat sat on the mat", "a dog barked loudly", "it is raining today", "we went home early"]
OUTPUTS = {
    "UF": REFS,
    "Online-W": [" ".join(r.split()[:-1]) for r in REFS],
    "Alpha": ["cats", "noise", "weather", "house"],
}
DA = {"UF.15": (95, 1.0), "Online-W.3": (60, 0.0), "Alpha.1": (20, -1.0)}


def _wmt21(folder: Path, extra_rows=(), sid=None) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "src.xx").write_text("q\n" * 4, encoding="utf-8")
    (folder / "ref.A.en").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    for name, lines in OUTPUTS.items():
        (folder / f"hyp.{name}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [f"{s} {sid or k} {raw} {z} 1" for s, (raw, z) in DA.items() for k in range(1, 5)] + list(extra_rows)
    (folder / "da-seg-scores.csv").write_text("SYS SID RAW.SCR Z.SCR N\n" + "\n".join(rows) + "\n", encoding="utf-8")
    sys_rows = "".join(f"{raw} {z} 4 {s} 4\n" for s, (raw, z) in DA.items())
    (folder / "da-sys-scores.csv").write_text("RAW.SCR Z.SCR N SYS N.ALL\n" + sys_rows, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "rows,sid,message",
    [
        (
            ["UF.15 2 10 -2.0 1"],
            None,
            r"da-seg-scores.csv:14: second DA row for system 'UF.15', SID 2 \(first at line 3\)",
        ),
        (
            ["Alpha.7 2 10 -2.0 1"],
            None,
            r"da-seg-scores.csv:14: DA system 'Alpha.7' and 'Alpha.1' \(.*:10\) are both system 'Alpha'",
        ),
        ([], "2.7", r"da-seg-scores.csv:2: SID must be an integer line number, got '2.7'"),
        ([], "inf", r"da-seg-scores.csv:2: SID must be an integer line number, got 'inf'"),
        (["UF.15 1 nan 0 1"], None, r"da-seg-scores.csv:14: RAW.SCR is 'nan' \(NaN or infinite\)"),
    ],
)
def test_wmt21_da_rows_are_checked(tmp_path, rows, sid, message):
    folder = _wmt21(tmp_path / "wmt21-xx-en", rows, sid)
    with pytest.raises(DataError, match=message):
        load_wmt21(folder)


def test_wmt21_repeated_judgments_averaged_only_when_asked(tmp_path):
    folder = _wmt21(tmp_path / "wmt21-xx-en", ["UF.15 2 85 0.5 1"])
    data = load_wmt21(folder, repeats="average")
    assert data.seg_raw["UF"][1] == 90.0 and data.seg_z["UF"][1] == 0.75 and data.seg_raw["UF"][0] == 95
    table = tasks.wmt21(folder=folder, metrics=["chrf"], bootstrap=0, repeats="average")
    assert {r.measure for r in table.rows} >= {"tau", "pearson-z"}
    assert (
        main(
            [
                "meta",
                "wmt21",
                "--data",
                str(folder),
                "--metric",
                "chrf",
                "--bootstrap",
                "0",
                "--no-cache",
                "--average-repeats",
                "--quiet",
            ]
        )
        == 0
    )


def test_wmt21_reads_mtme_score_files_like_its_own(tmp_path):
    folder = _wmt21(tmp_path / "wmt21-xx-en")
    from string_reference import chrf, corpus  # sacreBLEU's own values

    seg = {s: chrf(OUTPUTS[s], REFS) for s in OUTPUTS}
    system = {s: corpus("chrf", OUTPUTS[s], REFS) for s in OUTPUTS}
    seg_file, _ = write_mtme(tmp_path / "mtme", "chrf", "A", seg, system)
    table = tasks.wmt21(folder=folder, metrics=["chrf"], scores={"mine": seg_file}, bootstrap=0)
    values = {(r.metric, r.level, r.measure): r.value for r in table.rows}
    for (metric, level, measure), value in values.items():
        if metric == "mine":
            assert value == values[("chrf", level, measure)]


def test_task_api_validates_arguments_once_with_the_cli_messages(tmp_path):
    folder = _wmt21(tmp_path / "wmt21-xx-en")
    for limit, error, text in (
        (-10, ArgumentError, "--limit N"),
        (0, ArgumentError, "--limit N"),
        (2.5, ArgumentTypeError, "--limit N"),
        ("5", ArgumentTypeError, "--limit N"),
    ):
        with pytest.raises(error, match=text):
            tasks.wmt21(folder=folder, metrics=["chrf"], bootstrap=0, limit=limit)
    with pytest.raises(ArgumentTypeError, match="metrics must be a list of strings, got 'sentbleu'"):
        tasks.wmt21(folder=folder, metrics="sentbleu", bootstrap=0)
    with pytest.raises(ArgumentError, match="bootstrap must be an integer >= 0"):
        tasks.wmt21(folder=folder, metrics=["chrf"], bootstrap=-1)
    with pytest.raises(ArgumentTypeError, match="scores must map"):
        tasks.wmt21(folder=folder, scores=["a.tsv"], bootstrap=0)


def _summeval_doc(d: int, refs):
    systems = {
        f"M{k}": {"text": " ".join(REFS[d].split()[: 5 - k]) or "x", "scores": {"coherence": 5 - k + 0.1 * d}}
        for k in range(4)
    }
    return {"id": f"d{d}", "src": "src", "refs": refs, "systems": systems}


def test_summeval_empty_references_bom_and_system_rows(tmp_path):
    path = tmp_path / "sum-summeval.jsonl"
    path.write_text(
        "".join(json.dumps(_summeval_doc(d, [] if d == 1 else [REFS[d]])) + "\n" for d in range(3)), encoding="utf-8"
    )
    with pytest.raises(
        DataError, match=r"sum-summeval.jsonl:2: refs must be a non-empty list of reference texts, got \[\]"
    ):
        load_summeval(path)
    text = "".join(json.dumps(_summeval_doc(d, [REFS[d], REFS[d + 1]])) + "\n" for d in range(3))
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))  # a BOM: accepted, as in every other text file
    table = tasks.summeval(tmp_path, metrics=["chrf"], bootstrap=0)
    levels = {(r.level, r.measure) for r in table.rows}
    assert ("system", "spearman") in levels and ("system", "kendall") in levels and ("summary", "spearman") in levels


def test_one_encoding_rule_for_every_text_file(tmp_path):
    pair = {
        "id": 0,
        "lp": "xx-en",
        "src": "s",
        "ref": "the cat",
        "better": {"system": "A", "text": "the cat"},
        "worse": {"system": "B", "text": "a dog"},
    }
    path = tmp_path / "wmt-xx-en.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(pair) + "\n").encode("utf-8"))
    assert load_darr(path).better == ["the cat"]
    path.write_bytes((json.dumps(pair) + "\n").encode("utf-16"))
    with pytest.raises(DataError, match=r"wmt-xx-en.jsonl: not UTF-8 text \(byte 0xff at offset 0\)"):
        load_darr(path)
    folder = _wmt21(tmp_path / "wmt21-xx-en")
    (folder / "ref.A.en").write_bytes("\n".join(REFS).encode("latin-1") + b"\xe9\n")
    with pytest.raises(DataError, match="ref.A.en: not UTF-8 text"):
        load_wmt21(folder)


def test_outputs_checked_before_the_work_and_written_atomically(tmp_path, capsys):
    folder = _wmt21(tmp_path / "wmt21-xx-en")
    cache = tmp_path / "cache"
    base = [
        "meta",
        "wmt21",
        "--data",
        str(folder),
        "--metric",
        "chrf",
        "--bootstrap",
        "0",
        "--cache",
        str(cache),
        "--quiet",
    ]
    assert main(base + ["--json-out", str(tmp_path / "missing" / "out.json")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"folder {tmp_path / 'missing'} does not exist")
    assert not cache.exists() or not any(cache.iterdir())  # nothing was scored
    out = tmp_path / "out.csv"
    out.write_text("previous\n", encoding="utf-8")
    assert main(base + ["--csv", str(out)]) == 0
    assert out.read_text().startswith("dataset,metric,level")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # the temporary file was renamed


def test_short_names_and_bartscore_directions_from_one_pass(tmp_path, bart):
    tiny = str(Path(__file__).parents[1] / "golden" / "tiny-bart")
    assert short_name(f"bartscore:{tiny}:precision") == "bartscore:tiny-bart:precision"
    hyps, refs = ["the cat sat", "a dog", "the cat sat"], ["the cat sat on the mat", "a dog barked", "a cat"]
    scorers = Scorers({"device": "cpu"})
    srcs = ["die Katze sass", "ein Hund", "eine Katze"]
    got = {
        d: scorers.score(f"bartscore:{tiny}:{d}", hyps, refs, srcs)[0] for d in ("f", "precision", "recall", "harmonic")
    }
    # one f pass gave f, precision and recall (the scorer's one_pass); harmonic is a call of its own
    assert scorers.computed == 2
    src = scorers.score(f"bartscore:{tiny}:src", hyps, refs, srcs)[0]
    assert scorers.computed == 3  # src: a third call, on the same loaded model (one scorer for every direction)
    assert len({id(scorer) for key, scorer in scorers._loaded.items() if isinstance(key, str)}) == 1
    scorer = bart  # the session's scorer on the same checkpoint (conftest), for the expected values
    for direction, values in got.items():
        expected = scorer.compute(hyps, references=refs, direction=direction)
        np.testing.assert_allclose(values, expected.columns()[expected.primary], rtol=0, atol=1e-6)
    expected = scorer.compute(hyps, sources=srcs, direction="src")
    np.testing.assert_allclose(src, expected.columns()[expected.primary], rtol=0, atol=1e-6)


def test_export_scores_of_wmt21_and_summeval_read_back(tmp_path, capsys):
    folder = _wmt21(tmp_path / "wmt21-xx-en")
    export = tmp_path / "export"
    base = ["meta", "wmt21", "--data", str(folder), "--bootstrap", "0", "--no-cache", "--quiet", "--json"]
    assert main(base + ["--metric", "chrf", "--export-scores", str(export)]) == 0
    first = json.loads(capsys.readouterr().out)["results"]
    assert sorted(p.name for p in export.iterdir()) == ["chrf-refA.seg.score", "chrf-refA.sys.score", "chrf.jsonl"]
    assert len((export / "chrf.jsonl").read_text().splitlines()) == 12  # 3 systems x 4 segments, as scored
    assert main(base + ["--scores", f"chrf={export / 'chrf-refA.seg.score'}"]) == 0
    again = json.loads(capsys.readouterr().out)["results"]
    assert [(r["measure"], r["value"]) for r in again] == [(r["measure"], r["value"]) for r in first]
    path = tmp_path / "sum-summeval.jsonl"
    path.write_text("".join(json.dumps(_summeval_doc(d, [REFS[d]])) + "\n" for d in range(3)), encoding="utf-8")
    assert (
        main(
            [
                "meta",
                "summeval",
                "--data",
                str(tmp_path),
                "--metric",
                "chrf",
                "--bootstrap",
                "0",
                "--no-cache",
                "--quiet",
                "--export-scores",
                str(tmp_path / "summ"),
            ]
        )
        == 0
    )
    assert (tmp_path / "summ" / "chrf-refmax.seg.score").read_text().count("\n") == 12  # 4 systems x 3 documents


def test_compare_header_is_aligned_and_meta_has_a_description(tmp_path, capsys):
    ref, base, other = tmp_path / "r.txt", tmp_path / "long-baseline-name.txt", tmp_path / "s.txt"
    ref.write_text("the cat sat\na dog\n", encoding="utf-8")
    base.write_text("the cat sat\na cat\n", encoding="utf-8")
    other.write_text("cat\ndog\n", encoding="utf-8")
    assert main(["compare", "-r", str(ref), "-c", str(base), "-c", str(other), "--n-samples", "50"]) == 0
    header, first, second = capsys.readouterr().out.splitlines()[:3]
    for column in ("chrf", "mean [95% CI]", "p-value"):  # every column starts where its header does
        start = header.index(column)
        assert first[start - 2 : start] == "  " and first[start] != " " and second[start] != " ", column
    with pytest.raises(SystemExit):
        main(["meta", "--help"])
    assert "Meta-evaluate metrics against human judgments" in capsys.readouterr().out


def test_chart_leaves_tie_shares_and_thresholds_off_the_correlation_axis():
    pytest.importorskip("matplotlib")
    from nlgscore.meta.plot import plot_correlations

    rows = [
        {"dataset": "d", "metric": "m", "level": "segment", "measure": measure, "value": value}
        for measure, value in (("tau", 0.3), ("metric-ties", 0.15), ("acc-t", 0.5), ("acc-t-epsilon", 2.5))
    ]
    summary = [{"dataset": "d", "metric": "m", "spa": 0.8, "acc-t": 0.5, "average": 0.65}]
    fig = plot_correlations({"results": rows, "summary": summary})
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == ["d · segment · tau", "d · segment · acc-t", "d · WMT24 · SPA+acc-t average"]
