"""Streamed input equals in-memory input, for every format: text files, JSONL, TSV, CSV, Parquet,
a 🤗 Dataset and an IterableDataset (``streaming=True``), scored window by window.

The windows are smaller than the corpus and duplicates straddle them, so the scores and their
order must survive the split. Real MiniLM (the session scorer), nothing mocked.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from nlgscore.errors import ArgumentError, DataError
from nlgscore.stream import readers
from nlgscore.stream.row_windows import score_stream

pytestmark = pytest.mark.filterwarnings("ignore:BERTScore.*empty:UserWarning")  # the empty candidate is on purpose

PREDS = [
    "it is freezing today",
    "the cat sat on the mat",
    "",
    "dogs bark, at night",
    "hello world",
    "a b c",
    "it is freezing today",
    'she said "no"',
    "the end",
]
REFS = [
    "the weather is cold today",
    "a cat was sitting on the mat",
    "nothing here",
    "a dog barks",
    "hello world",
    "a b d",
    "the weather is cold today",
    "she refused",
    "it ends",
]
SRCS = [f"source {k}" for k in range(len(PREDS))]
MULTI = [[r, r.upper()] if k % 3 == 0 else [r] for k, r in enumerate(REFS)]


@pytest.fixture(scope="module")
def expected(minilm_scorer):
    return minilm_scorer.compute(PREDS, references=REFS).columns()


@pytest.fixture(scope="module")
def expected_multi(minilm_scorer):
    return minilm_scorer.compute(PREDS, references=MULTI).columns()


def _columns(rows):
    return {name: [row[name] for row in rows] for name in rows[0]}


def _check(scorer, inputs, expected, window=4):
    got = _columns(list(score_stream(scorer, inputs, window=window)))
    assert list(got) == list(expected)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-6, rtol=0)


def _lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_text_files(minilm_scorer, expected, expected_multi, tmp_path):
    cands, refs = _lines(tmp_path / "c.txt", PREDS), _lines(tmp_path / "r.txt", REFS)
    _check(minilm_scorer, readers.text_files(cands, [refs]), expected)
    # several -r files: each candidate gets a list of references
    upper = _lines(tmp_path / "r2.txt", [r.upper() for r in REFS])
    both = minilm_scorer.compute(PREDS, references=[[r, r.upper()] for r in REFS]).columns()
    _check(minilm_scorer, readers.text_files(cands, [refs, upper]), both, window=2)
    # CRLF line ends and a BOM are read as plain lines
    (tmp_path / "crlf.txt").write_bytes(b"\xef\xbb\xbf" + "".join(p + "\r\n" for p in PREDS).encode())
    _check(minilm_scorer, readers.text_files(str(tmp_path / "crlf.txt"), [refs]), expected)


def test_jsonl_with_reference_lists(minilm_scorer, expected_multi, tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(
            json.dumps({"prediction": p, "reference": r, "id": k}) + "\n" for k, (p, r) in enumerate(zip(PREDS, MULTI))
        ),
        encoding="utf-8",
    )
    _check(minilm_scorer, readers.table_file(str(path)), expected_multi)


def test_tsv_and_csv(minilm_scorer, expected, tmp_path):
    tsv = tmp_path / "corpus.tsv"
    tsv.write_text("hyp\tref\n" + "".join(f"{p}\t{r}\n" for p, r in zip(PREDS, REFS)), encoding="utf-8")
    _check(minilm_scorer, readers.table_file(str(tsv), prediction_column="hyp", reference_column="ref"), expected)
    path = tmp_path / "corpus.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:  # quoted commas and quotes
        writer = csv.writer(handle)
        writer.writerow(["prediction", "reference"])
        writer.writerows(zip(PREDS, REFS))
    _check(minilm_scorer, readers.table_file(str(path)), expected, window=5)


def test_parquet(minilm_scorer, expected_multi, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"prediction": PREDS, "reference": MULTI}), path, row_group_size=4)
    _check(minilm_scorer, readers.table_file(str(path)), expected_multi, window=3)


def test_datasets_in_memory_and_streaming(minilm_scorer, expected, tmp_path):
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict({"prediction": PREDS, "reference": REFS})
    _check(minilm_scorer, readers.dataset(table, batch_size=2), expected)
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"prediction": p, "reference": r}) + "\n" for p, r in zip(PREDS, REFS)), encoding="utf-8"
    )
    streamed = datasets.load_dataset("json", data_files=str(path), split="train", streaming=True)
    assert isinstance(streamed, datasets.IterableDataset)
    _check(minilm_scorer, readers.dataset(streamed, batch_size=3), expected)


def test_sources_column(tmp_path):
    from nlgscore.seq2seq.prism import PrismScorer

    scorer = PrismScorer(str(Path(__file__).parents[1] / "golden" / "tiny-prism"), lang="en", mode="src")
    want = scorer.compute(PREDS, sources=SRCS).columns()
    path = tmp_path / "qe.jsonl"
    path.write_text(
        "".join(json.dumps({"prediction": p, "source": s}) + "\n" for p, s in zip(PREDS, SRCS)), encoding="utf-8"
    )
    _check(scorer, readers.table_file(str(path), reference_column=None, source_column="source"), want)


def test_bad_rows_name_file_and_line(minilm_scorer, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prediction": "a", "reference": "b"}\n{"prediction": "a"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.jsonl:2: no column 'reference'"):
        list(score_stream(minilm_scorer, readers.table_file(str(path))))
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("prediction\treference\nx\ty\nonly one field\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.tsv:3: 1 fields but the header has 2"):
        list(readers.table_file(str(tsv)).rows())
    cands, refs = _lines(tmp_path / "c.txt", PREDS), _lines(tmp_path / "r.txt", REFS[:-1])
    with pytest.raises(DataError, match=r"r.txt has 8 lines but .*c.txt has more"):
        list(readers.text_files(cands, [refs]).rows())
    (tmp_path / "latin1.txt").write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(DataError, match=r"latin1.txt:2 is not UTF-8"):
        list(readers.text_files(str(tmp_path / "latin1.txt"), [refs]).rows())
    with pytest.raises(ArgumentError, match="window must be a positive integer"):
        list(score_stream(minilm_scorer, readers.lists(PREDS, REFS), window=0))
    with pytest.raises(ArgumentError, match="cannot tell the format of"):
        readers.table_file(str(tmp_path / "c.txt.gz"))


def test_idf_from_each_window_is_refused_fixed_idf_streams():
    from nlgscore.bertscore import BERTScorer

    per_call = BERTScorer(model_type="minilm", num_layers=1, idf=True)
    with pytest.raises(ArgumentError, match="idf taken from each call's references would change with the window"):
        list(score_stream(per_call, readers.lists(PREDS, REFS), window=4))
    fixed = BERTScorer(model_type="minilm", num_layers=1, idf_sents=REFS)
    want = fixed.compute(PREDS, references=REFS).columns()
    _check(fixed, readers.lists(PREDS, REFS), want, window=4)


def test_stdin_with_or_without_a_byte_buffer_reads_the_same(monkeypatch):
    # The CLI reads its files through text_lines too (one encoding rule); a text-only stdin
    # (IDLE, some notebook kernels have no .buffer) gives the same lines as a byte one.
    import io

    data = "\ufeffcafé\r\nline two\u2028same line\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data.encode("utf-8")), encoding="utf-8"))
    with_buffer = list(readers.text_lines("-"))
    monkeypatch.setattr("sys.stdin", io.StringIO(data))
    without_buffer = list(readers.text_lines("-"))
    assert with_buffer == without_buffer == ["café", "line two\u2028same line"]
