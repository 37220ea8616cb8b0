"""nlgscore meta mqm on the two shared MQM folders (read in place, first lines only so the tests stay
fast) and on tiny folders built in tmp_path: every measure for chrF and BLEU, mtme score files equal
to --metric, the score cache (a re-run does not rescore), interrupted runs keep finished metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sacrebleu")

from nlgscore.cli import main
from nlgscore.meta.engine import ScoreCache, Scorers
from nlgscore.meta.tasks.human_scores import MEASURES, mqm

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
FOLDERS = {"mqm-wmt23-en-de-sxs": 140, "mqm-wmt21-zh-en": 200}  # lines used: ~100 and ~150 rated segments


def _values(table):
    return {(r.metric, r.level, r.measure): r.value for r in table.rows}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return ScoreCache(tmp_path_factory.mktemp("score-cache"))


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_shared_folders_give_every_measure_for_chrf_and_bleu_and_mtme_files_equal_metrics(name, cache, tmp_path):
    folder = SHARED / name
    if not folder.is_dir():
        pytest.skip(f"{folder} not found (../shared/data)")
    table = mqm(
        folder,
        ["chrf", "bleu"],
        limit=FOLDERS[name],
        permutations=50,
        scorers=Scorers(cache=cache),
        export_mtme=tmp_path,
    )
    values = _values(table)
    for metric in ("chrf", "bleu"):
        for level, measure in MEASURES:
            value = values[(metric, level, measure)]
            assert math.isfinite(value), (metric, level, measure)
            assert (
                (0 <= value <= 1)
                if measure in ("accuracy", "spa", "acc-t")
                else (-1 <= value <= 1 or measure.endswith("epsilon"))
            )
    assert {s["metric"] for s in table.summary()} == {"chrf", "bleu"}
    assert any("significance clusters" in note for note in table.notes)
    assert any("not scored as systems: ref" in note for note in table.notes)  # the reference in use
    # the exported mtme files, read back with --scores, give the same numbers as --metric
    files = {m: str(next(tmp_path.glob(f"{m}-refA.seg.score"))) for m in ("chrf", "bleu")}
    again = mqm(folder, scores={f"file-{m}": f for m, f in files.items()}, limit=FOLDERS[name], permutations=0)
    for (metric, level, measure), value in _values(again).items():
        assert value == values[(metric[len("file-") :], level, measure)], (metric, level, measure)


def _tiny_folder(folder: Path, seg_rows=None, extra_hyp=True) -> Path:
    folder.mkdir(exist_ok=True)
    refs = ["the cat sat on the mat", "a dog ran in the park", "it is raining today", "she reads a book"]
    outputs = {
        "good": ["the cat sat on a mat", "a dog ran in the park", "it is raining today", "she reads a book"],
        "mid": ["the cat sat", "a dog ran", "it rains today", "she reads books"],
        "bad": ["cat", "dog", "rain", "book"],
        "worst": ["x", "y", "z", "w"],
    }
    if extra_hyp:
        outputs["refA"] = refs  # a human translation equal to the reference in use
    (folder / "src.xx").write_text("".join(f"s{i}\n" for i in range(4)), encoding="utf-8")
    (folder / "ref.A.en").write_text("\n".join(refs) + "\n", encoding="utf-8")
    quality = {"good": -0.5, "mid": -2.0, "bad": -5.0, "worst": -9.0, "refA": 0.0}
    for system, lines in outputs.items():
        (folder / f"hyp.{system}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if seg_rows is None:
        seg_rows = [f"{s}\t{line}\t{quality[s] - 0.1 * line}" for s in outputs for line in (1, 2, 3)]
    (folder / "mqm-seg-scores.tsv").write_text("\n".join(seg_rows) + "\n", encoding="utf-8")
    return folder


def test_tiny_folder_measures_by_hand(tmp_path):
    folder = _tiny_folder(tmp_path / "tiny")
    table = mqm(folder, ["chrf"], permutations=0)
    values = _values(table)
    # chrF orders the four systems as humans do: every pairwise measure is perfect
    assert values[("chrf", "system", "accuracy")] == 1.0
    assert values[("chrf", "system", "spa")] == pytest.approx(1.0, abs=0.05)
    assert {r.metric for r in table.rows} == {"chrf"} and "not scored as systems: refA" in table.notes[0]
    assert "4 systems" in table.notes[0] and "3 rated" in table.notes[0]


def test_cli_cache_reuse_export_and_interrupted_run(tmp_path, capsys, monkeypatch):
    folder = _tiny_folder(tmp_path / "tiny")
    cache = tmp_path / "cache"
    out = tmp_path / "out.json"
    args = [
        "meta",
        "mqm",
        "--data",
        str(folder),
        "--metric",
        "chrf",
        "--permutations",
        "0",
        "--cache",
        str(cache),
        "--quiet",
    ]
    assert main(args + ["--json", "--export-scores", str(tmp_path / "export")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert {tuple(k) for k in [(r["level"], r["measure"]) for r in first["results"]]} == set(MEASURES)
    assert first["summary"][0]["metric"] == "chrf" and (tmp_path / "export" / "chrf-refA.seg.score").is_file()
    assert json.loads((tmp_path / "export" / "chrf.jsonl").read_text().splitlines()[0])["metric"] == "chrf"
    # a re-run is served by the cache: nothing is scored again
    scorers = Scorers(cache=ScoreCache(cache))
    again = mqm(folder, ["chrf"], permutations=0, scorers=scorers)
    assert scorers.computed == 0 and scorers.cache.hits == 2  # segment scores and corpus chrF
    assert [r["value"] for r in first["results"]] == [r.value for r in again.rows]
    # an error in the second metric: the first one's rows are printed and written, exit 2
    bad = tmp_path / "bad.seg.score"
    bad.write_text("good\tnan\n", encoding="utf-8")
    assert main(args + ["--scores", f"bad={bad}", "--json-out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "bad.seg.score:1: score is 'nan'" in captured.err and "INCOMPLETE" in captured.out
    assert {r["metric"] for r in json.loads(out.read_text())["results"]} == {"chrf"}


def test_keyboard_interrupt_keeps_finished_metrics(tmp_path):
    """Ctrl-C during the second metric. The scorer raising KeyboardInterrupt stands in for the user
    (the thing under test is the run keeping what finished, not the scorer)."""
    folder = _tiny_folder(tmp_path / "tiny")

    class Interrupted(Scorers):
        def score(self, spec, hyps, refs, srcs=None, name=None):
            if spec == "bleu":  # the second metric (mqm: the registry bleu, sacreBLEU's sentence_bleu)
                raise KeyboardInterrupt
            return super().score(spec, hyps, refs, srcs, name)

    with pytest.raises(KeyboardInterrupt) as caught:
        mqm(folder, ["chrf", "bleu"], permutations=0, scorers=Interrupted())
    partial = caught.value.partial_table
    assert {r.metric for r in partial.rows} == {"chrf"} and "interrupted" in partial.notes[-1]


def test_human_translations_and_bad_score_files(tmp_path):
    folder = _tiny_folder(tmp_path / "tiny")
    second_reference = "the cat is on the mat\na dog runs in a park\nit rains today\nshe is reading a book\n"
    for name in ("hyp.refB.en", "ref.B.en"):  # a second human translation, rated as a system
        (folder / name).write_text(second_reference, encoding="utf-8")
    rows = (folder / "mqm-seg-scores.tsv").read_text().splitlines() + ["refB\t1\t-1", "refB\t2\t-1", "refB\t3\t-1"]
    (folder / "mqm-seg-scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    default = mqm(folder, ["chrf"], reference="A", permutations=0)
    assert "not scored as systems: refA, refB" in default.notes[0]
    with_human = mqm(folder, ["chrf"], reference="A", include_human=True, permutations=0)
    assert "not scored as systems: refA" in with_human.notes[0] and "5 systems" in with_human.notes[0]
    for bad_row, message in (
        ("good\t2.7\t-1", "segment id must be an integer line number, got '2.7'"),
        ("good\tinf\t-1", "segment id must be an integer line number, got 'inf'"),
        ("good\t4\tinf", "score is 'inf' (NaN or infinite)"),
        ("good\t9\t-1", "segment id 9 outside 1..4"),
        ("nobody\t1\t-1", "system 'nobody' has no hyp.nobody.* output file"),
        ("good\t1\t-3", "second score for system 'good', segment 1 (first at line 1)"),
    ):
        broken = _tiny_folder(tmp_path / "broken", seg_rows=["good\t1\t-1", "mid\t1\t-2", bad_row])
        with pytest.raises(
            ValueError, match="mqm-seg-scores.tsv:3: " + message.replace("(", r"\(").replace(")", r"\)")
        ):
            mqm(broken, ["chrf"], permutations=0)
    repeated = _tiny_folder(
        tmp_path / "repeated",
        seg_rows=[f"{s}\t{k}\t{-i - k}" for s, i in (("good", 0), ("mid", 2), ("bad", 5), ("worst", 9)) for k in (1, 2)]
        + ["good\t1\t-3"],
    )
    averaged = mqm(repeated, ["chrf"], repeats="average", permutations=0)
    assert np.isfinite([r.value for r in averaged.rows]).all()


def test_mtme_files_may_list_systems_the_folder_dropped(tmp_path):
    """mt-metrics-eval files hold every system of a WMT set; a folder may hold fewer (the shared zh-en
    folder dropped metricsystem1-5 and ref-B): extra systems are skipped, a missing one is an error."""
    folder = _tiny_folder(tmp_path / "tiny")
    rows = [f"{s}\t{v}" for s, v in (("good", 3), ("mid", 2), ("bad", 1), ("worst", 0), ("metricsystem1", 9))]
    path = tmp_path / "mine-refA.sys.score"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    values = _values(mqm(folder, scores={"mine": str(path)}, permutations=0))
    assert values[("mine", "system", "accuracy")] == 1.0 and ("mine", "segment", "pearson") not in values
    path.write_text("\n".join(rows[1:]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"no scores for system\(s\) \['good'\]"):
        mqm(folder, scores={"mine": str(path)}, permutations=0)
