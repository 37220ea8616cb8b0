"""nlgscore.meta.tasks on the shared data (../shared/data next to the repository, never copied here)
and on copies built in tmp_path: a second WMT21 language pair, shuffled and upstream (misaligned) DA
files, and --scores files written from chrF that must give the numbers of --metric chrf."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from string_reference import chrf, corpus

pytest.importorskip("sacrebleu")

from nlgscore.meta import tasks
from nlgscore.meta.data.alignment import check_alignment
from nlgscore.meta.data.loaders import load_darr
from nlgscore.meta.data.wmt21 import load_wmt21, wmt21_judgments

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
DEEN = SHARED / "wmt21-de-en"
LIMIT = 120  # segments of WMT21 used by the scoring tests (19 systems each)

needs_wmt21 = pytest.mark.skipif(not DEEN.is_dir(), reason=f"WMT21 de-en not found at {DEEN} (../shared/data)")


def _values(table):
    return {(r.dataset, r.metric, r.level, r.measure): r.value for r in table.rows}


def _copy(tmp_path: Path, name: str = "wmt21-de-en") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for item in DEEN.iterdir():
        shutil.copy(item, folder / item.name)
    return folder


def _rewrite_sids(folder: Path, new_sid) -> None:
    lines = (folder / "da-seg-scores.csv").read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        fields = line.split(" ")
        fields[1] = str(new_sid(int(fields[1])))
        out.append(" ".join(fields))
    (folder / "da-seg-scores.csv").write_text("\n".join(out) + "\n", encoding="utf-8")


def _alignment(folder: Path):
    data = load_wmt21(folder)
    judgments = wmt21_judgments(data)
    return check_alignment([data.hyps[s] for s in judgments.systems], judgments.z)


@needs_wmt21
def test_alignment_check_passes_the_corrected_file_and_catches_misaligned_copies(tmp_path):
    check = _alignment(DEEN)
    assert check.aligned is True and check.p_value < 0.01
    assert (round(check.r_identical, 3), round(check.r_different, 3)) == (0.166, 0.094)  # ALIGNMENT-README
    shuffled = _copy(tmp_path)
    permutation = np.random.default_rng(1).permutation(1000) + 1
    _rewrite_sids(shuffled, lambda sid: int(permutation[sid - 1]))
    assert _alignment(shuffled).aligned is False
    # The upstream file: SIDs number the document-sorted order (sid-map.tsv maps them back).
    upstream = _copy(tmp_path, "upstream")
    rows = (DEEN / "sid-map.tsv").read_text(encoding="utf-8").splitlines()[1:]
    to_upstream = {int(r.split("\t")[1]): int(r.split("\t")[0]) for r in rows}
    _rewrite_sids(upstream, to_upstream.__getitem__)
    assert _alignment(upstream).aligned is False


@needs_wmt21
def test_wmt21_second_language_pair_laid_out_the_same(tmp_path):
    folder = _copy(tmp_path, "wmt21-xx-en")
    (folder / "src.de").rename(folder / "src.xx")
    table = tasks.wmt21(tmp_path, lp="xx-en", metrics=["chrf"], bootstrap=0, limit=LIMIT)
    reference = tasks.wmt21(folder=DEEN, metrics=["chrf"], bootstrap=0, limit=LIMIT)
    assert {k[1:]: v for k, v in _values(table).items()} == {k[1:]: v for k, v in _values(reference).items()}
    assert {r.dataset for r in table.rows} == {"wmt21-xx-en"}
    assert tasks.wmt21(folder=folder, metrics=["chrf"], bootstrap=0, limit=LIMIT).rows[0].dataset == "wmt21-xx-en"


@needs_wmt21
def test_wmt21_full_chrf_numbers_and_ties():
    """The README's WMT21 chrF numbers on the corrected file (no bootstrap, all 1000 segments)."""
    table = tasks.wmt21(folder=DEEN, metrics=["chrf"], bootstrap=0)
    v = {k[3] if k[2] == "segment" else "system": x for k, x in _values(table).items()}
    assert v["pearson-z"] == pytest.approx(0.2347, abs=5e-4)
    assert v["tau"] == pytest.approx(-0.090, abs=5e-4) and v["metric-ties"] == pytest.approx(0.162, abs=1e-3)
    assert v["system"] == pytest.approx(0.3534, abs=5e-4)  # corpus chrF (mean of sentence chrF: 0.393)
    # ties excluded: (C - D) / (C + D) = (tau + ties) / (1 - ties), the README's 0.085
    assert (v["tau"] + v["metric-ties"]) / (1 - v["metric-ties"]) == pytest.approx(0.085, abs=5e-4)
    assert any("segment ids follow the text lines" in note for note in table.notes)


@needs_wmt21
def test_wmt21_scores_files_equal_metric(tmp_path):
    data = load_wmt21(DEEN)
    systems = sorted(s for s in data.hyps if s != "HUMAN")
    rows, sys_rows = [], []
    for system in systems:
        scores = chrf(data.hyps[system][:LIMIT], data.ref[:LIMIT])
        rows += [f"{system}\t{line}\t{score!r}" for line, score in enumerate(scores, start=1)]
        rows += [f"{system}\t{line}\t0.0" for line in range(LIMIT + 1, len(data.ref) + 1)]  # outside --limit
        sys_rows.append(f"{system}\t{corpus('chrf', data.hyps[system][:LIMIT], data.ref[:LIMIT])!r}")
    seg, sys = tmp_path / "chrf.tsv", tmp_path / "chrf-sys.tsv"
    seg.write_text("\n".join(rows) + "\n", encoding="utf-8")
    sys.write_text("\n".join(sys_rows) + "\n", encoding="utf-8")
    table = tasks.wmt21(folder=DEEN, metrics=["chrf"], scores={"file": f"{seg},{sys}"}, bootstrap=100, limit=LIMIT)
    by_metric = {}
    for row in table.rows:
        by_metric.setdefault(row.metric, []).append((row.level, row.measure, row.value, row.ci_low, row.ci_high))
    assert by_metric["file"] == by_metric["chrf"]


def _summeval_ok():
    return (SHARED / "sum-summeval.jsonl").is_file()


@pytest.mark.skipif(not _summeval_ok(), reason=f"sum-summeval.jsonl not found in {SHARED}")
def test_summeval_scores_file_equals_metric_and_significance_lines(tmp_path):
    from nlgscore.meta.data.loaders import load_summeval

    data = load_summeval(SHARED / "sum-summeval.jsonl")
    limit = 12
    lines = []
    for d in range(len(data.ids)):
        texts = data.texts[d]
        scores = chrf(texts, [data.refs[d][0]] * len(texts)) if d < limit else [0.5] * len(texts)
        lines += [json.dumps({"id": data.ids[d], "system": s, "score": x}) for s, x in zip(data.systems, scores)]
    path = tmp_path / "chrf.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = tasks.summeval(
        SHARED,
        metrics=["chrf", "rouge1"],
        scores={"file": path},
        aspects=["coherence"],
        refs="first",
        bootstrap=100,
        limit=limit,
    )
    values = _values(table)
    for measure in ("spearman", "kendall"):
        assert (
            values[("summeval-coherence", "file", "summary", measure)]
            == values[("summeval-coherence", "chrf", "summary", measure)]
        )
    assert -1 <= values[("summeval-coherence", "rouge1", "summary", "spearman")] <= 1
    assert any("Spearman" in note and "paired bootstrap" in note for note in table.notes)


def test_wmt19_scores_file_equals_metric_ties_and_errors(tmp_path):
    pairs = [
        {
            "id": 10 + i,
            "lp": "xx-en",
            "src": "s",
            "ref": "the cat sat on the mat",
            "better": {"system": "A", "text": better},
            "worse": {"system": "B", "text": worse},
        }
        for i, (better, worse) in enumerate([("the cat sat", "a dog"), ("cat", "cat"), ("a mat", "the cat sat on")])
    ]
    (tmp_path / "wmt-xx-en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    darr = load_darr(tmp_path / "wmt-xx-en.jsonl")
    scores = chrf(darr.better + darr.worse, darr.ref * 2)
    lines = [json.dumps({"id": i, "better": b, "worse": w}) for i, b, w in zip(darr.ids, scores[:3], scores[3:])]
    (tmp_path / "s-xx-en.jsonl").write_text("\n".join(lines[::-1]) + "\n", encoding="utf-8")
    table = tasks.wmt19(tmp_path, metrics=["chrf"], scores={"mine": tmp_path / "s-{lp}.jsonl"}, bootstrap=50)
    values = _values(table)
    assert (
        values[("xx-en", "mine", "segment", "tau")]
        == values[("xx-en", "chrf", "segment", "tau")]
        == pytest.approx(-1 / 3)
    )
    assert values[("xx-en", "chrf", "segment", "metric-ties")] == pytest.approx(1 / 3)
    excluded = tasks.wmt19(tmp_path, metrics=["chrf"], ties="exclude", bootstrap=0)
    assert excluded.rows[0].value == 0.0  # one concordant, one discordant, the tie left out
    with pytest.raises(ValueError, match="at least one metric"):
        tasks.wmt19(tmp_path)
    with pytest.raises(FileNotFoundError, match="looked in"):
        tasks.wmt19(tmp_path / "nowhere", metrics=["chrf"], pairs=["xx-en"])
