"""``nlgscore meta wmt24 --context K``: document-level BERTScore on a slice of the shared WMT24 en-cs ESA
folder (read in place from ../shared, the slice written in the test; skipped when absent).

The slice is WMT's own layout (``txt/`` and ``humeval/``) cut to the first lines of the test set and
four rated systems, with every rating of two lines dropped (line 3, in the middle of a document, and
line 28): those lines are unrated, and the rated lines after them must still read them as context.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sacrebleu")

from nlgscore import registry
from nlgscore.cli import main
from nlgscore.errors import ArgumentError
from nlgscore.meta.data.wmt_sets import load_wmt
from nlgscore.meta.engine import ScoreCache, Scorers
from nlgscore.meta.tasks.generic import run
from nlgscore.meta.tasks.human_scores import MQM_TASK
from nlgscore.meta.tasks.wmt24_25 import wmt24, wmt25

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "esa-wmt24-en-cs"
LINES = 36  # the CANARY line and the first five documents of the test set
SYSTEMS = ("Aya23", "CUNI-GA", "GPT-4", "IKUN")
UNRATED = {3, 28}
METRIC = "bertscore:minilm"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found (../shared/data)")
    root = tmp_path_factory.mktemp("esa-slice")
    files = {
        "txt/sources/en-cs.txt": "txt/sources/en-cs.txt",
        "txt/references/en-cs.refA.txt": "txt/references/en-cs.refA.txt",
        "txt/documents/en-cs.docs": "txt/documents/en-cs.docs",
        **{f"txt/system-outputs/en-cs/{s}.txt": f"txt/system-outputs/en-cs/{s}.txt" for s in SYSTEMS},
    }
    for target, source in files.items():
        lines = (SHARED / source).read_text(encoding="utf-8").split("\n")[:LINES]
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        (root / target).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (esa,) = sorted((SHARED / "humeval").glob("esa_*.csv"))
    with esa.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f) if r[1] in SYSTEMS and int(r[2]) < LINES and int(r[2]) not in UNRATED]
    (root / "humeval").mkdir()
    with (root / "humeval" / esa.name).open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return root


def _text(root: Path, name: str) -> list:
    return (root / "txt" / name).read_text(encoding="utf-8").splitlines()


def test_segment_scores_equal_the_scorers_own_context_call(data):
    evalset = load_wmt(data, context=2)
    items = np.asarray(evalset.derived("lines", lambda: None))
    assert UNRATED <= set(items.tolist())  # read as context of the lines after them, so scored too
    assert np.isnan(evalset.human["segment"][:, np.isin(items, sorted(UNRATED))]).all()
    scorers = Scorers(record=True)
    table = wmt24(data, [METRIC], permutations=0, context=2, scorers=scorers)
    assert any("previous 2 segments of its document" in note for note in table.notes)
    assert all("|ctx:2|" in r.signature for r in table.rows if r.dataset != "all")

    # one system's scores: the scorer's own call over the whole slice, with the data set's documents
    system = evalset.systems.index("GPT-4")
    _, hyps, refs, _, scored = scorers.scored[system]
    whole = registry.cached(METRIC)
    docs = [line.split("\t")[1] for line in _text(data, "documents/en-cs.docs")]
    expected = whole.compute(
        _text(data, "system-outputs/en-cs/GPT-4.txt"), _text(data, "references/en-cs.refA.txt"), context=2, doc_ids=docs
    ).scores
    assert hyps == [_text(data, "system-outputs/en-cs/GPT-4.txt")[i] for i in items]
    assert scored == [float(expected[i]) for i in items]  # an item's score is the same in any call
    sentence = whole.compute(hyps, refs).scores
    assert not np.allclose(scored, sentence)  # context changes the scores of lines with previous lines
    assert scored[0] == float(sentence[0])  # the CANARY line has no previous line


def test_cache_keeps_context_0_and_2_apart(data, tmp_path):
    cache = tmp_path / "cache"
    plain = Scorers(cache=ScoreCache(cache))
    sentence = wmt24(data, [METRIC], permutations=0, scorers=plain)
    files = set(cache.iterdir())
    in_context = Scorers(cache=ScoreCache(cache))
    document = wmt24(data, [METRIC], permutations=0, context=2, scorers=in_context)
    assert in_context.computed == len(SYSTEMS) and in_context.cache.hits == 0  # context 0's scores not served
    assert files < set(cache.iterdir())
    assert {r.value for r in document.rows} != {r.value for r in sentence.rows}
    again = Scorers(cache=ScoreCache(cache))
    rerun = wmt24(data, [METRIC], permutations=0, context=2, scorers=again)
    assert again.computed == 0 and again.cache.hits == len(SYSTEMS)
    assert [(r.measure, r.value, r.signature) for r in rerun.rows] == [
        (r.measure, r.value, r.signature) for r in document.rows
    ]
    zero = Scorers(cache=ScoreCache(cache))
    assert [r.value for r in wmt24(data, [METRIC], permutations=0, context=0, scorers=zero).rows] == [
        r.value for r in sentence.rows
    ]
    assert zero.computed == 0  # --context 0 is the sentence-level run, under its keys


def test_cli_records_the_context_in_json(data, tmp_path, capsys):
    args = ["meta", "wmt24", "--data", str(data), "--metric", METRIC, "--permutations", "0", "--quiet"]
    assert main(args + ["--context", "2", "--json", "--cache", str(tmp_path / "cache")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all("|ctx:2|" in r["signature"] for r in out["results"] if r["dataset"] != "all")
    assert any("previous 2 segments" in note for note in out["notes"])


def test_bad_uses_are_refused(data, tmp_path, capsys):
    with pytest.raises(ArgumentError, match=r"--context 2: metric 'chrf' does not read document context"):
        wmt24(data, ["chrf", METRIC], permutations=0, context=2)
    with pytest.raises(ArgumentError, match=r"context must be >= 0 \(--context K"):
        wmt24(data, [METRIC], permutations=0, context=-1)
    args = ["meta", "wmt24", "--data", str(data), "--metric", "bleu", "--context", "2", "--no-cache", "--quiet"]
    assert main(args) != 0
    assert "--context 2: metric 'bleu'" in capsys.readouterr().err
    (data / "txt" / "documents" / "en-cs.docs").rename(tmp_path / "docs")  # a data set without documents
    try:
        with pytest.raises(ArgumentError, match=r"--context 2: en-cs of .* has no document ids"):
            wmt24(data, [METRIC], permutations=0, context=2)
    finally:
        (tmp_path / "docs").rename(data / "txt" / "documents" / "en-cs.docs")
    with pytest.raises(ArgumentError, match="--context 2: the mqm data set has no documents"):
        run(MQM_TASK, [METRIC], data=tmp_path, context=2)
    assert main(["meta", "mqm", "--data", str(tmp_path), "--metric", METRIC, "--context", "1", "--quiet"]) != 0
    assert "--context 1: the mqm data set has no documents" in capsys.readouterr().err


def test_wmt25_paragraphs_read_their_doc_ids(tmp_path):
    refs = ["The cat sat.", "She slept.", "It rained.", "Shares fell.", "Asia lost most.", "They may recover."]
    outputs = {
        "A": ["A cat sat.", "It slept.", "Rain fell.", "Stocks fell.", "Asia lost.", "They recover."],
        "B": ["The cat.", "Sleep.", "Rain.", "Shares.", "Asia.", "Recover."],
        "C": ["Dog.", "Run.", "Sun.", "Bonds.", "Europe.", "No."],
    }
    records = [
        {
            "doc_id": f"en-cs_CZ_#_news_#_d{i // 3}",
            "src_text": f"src {i}",
            "tgt_text": {"refA": ref, **{s: out[i] for s, out in outputs.items()}},
            # paragraph 1 is unrated: paragraph 2 still reads it as context
            "scores": {} if i == 1 else {s: {"human1": 90 - 30 * k + i} for k, s in enumerate(outputs)},
        }
        for i, ref in enumerate(refs)
    ]
    path = tmp_path / "wmt25-genmt-humeval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    scorers = Scorers(record=True)
    table = wmt25(path, [METRIC], permutations=0, context=1, scorers=scorers)
    assert "6 of 6 lines scored (5 rated, 1 as their context only)" in table.notes[0]
    docs = [r["doc_id"] for r in records]
    for k, system in enumerate(outputs):
        expected = registry.cached(METRIC).compute(outputs[system], refs, context=1, doc_ids=docs).scores
        assert scorers.scored[k][4] == [float(v) for v in expected]
