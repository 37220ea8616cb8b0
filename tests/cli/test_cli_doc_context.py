"""``nlgscore score ... --context K --doc-ids FILE`` (or a table's doc_id column): the numbers of
``compute(..., context=K, doc_ids=...)``, and one-line errors naming the flag."""

from __future__ import annotations

import json

import pytest

from nlgscore.cli import main
from nlgscore.registry import cached

SPEC = "bertscore:minilm:L2"
PREDS = ["The cat sat on a mat.", "It was glad.", "Then it slept.", "Stocks went down.", "The markets fell."]
REFS = ["A cat sat on the mat.", "It was happy.", "Then it went to sleep.", "Stocks fell.", "Markets dropped."]
DOCS = ["a", "a", "a", "b", "b"]


@pytest.fixture
def files(tmp_path):
    for name, lines in (("c.txt", PREDS), ("r.txt", REFS), ("d.txt", DOCS)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(
        "".join(
            json.dumps({"prediction": p, "reference": r, "doc_id": d}) + "\n" for p, r, d in zip(PREDS, REFS, DOCS)
        ),
        encoding="utf-8",
    )
    return tmp_path


def _json(capsys, argv):
    assert main(argv + ["--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_files_and_table_give_compute_numbers(files, capsys):
    expected = cached(SPEC).compute(PREDS, REFS, context=2, doc_ids=DOCS)
    by_files = _json(
        capsys,
        [
            "score",
            SPEC,
            "-c",
            str(files / "c.txt"),
            "-r",
            str(files / "r.txt"),
            "--context",
            "2",
            "--doc-ids",
            str(files / "d.txt"),
        ],
    )
    by_table = _json(capsys, ["score", SPEC, "-i", str(files / "t.jsonl"), "--context", "2"])
    assert by_files["f1"] == by_table["f1"] == list(expected.f1)
    assert by_files["signature"] == str(expected.signature) and "|ctx:2|" in by_files["signature"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--context", "2"], "--context 2 needs --doc-ids FILE"),
        (["--context", "-1", "--doc-ids", "d.txt"], "--context must be >= 0"),
        (["--doc-ids", "d.txt"], "--doc-ids/--doc-id-column are used with --context K"),
        (["--context", "1", "--doc-ids", "short.txt"], "--doc-ids has 2 lines but the input has 5"),
        (["--context", "1", "--doc-ids", "d.txt", "-o", "out.tsv"], "--context scores the corpus in one call"),
    ],
)
def test_bad_context_flags_are_named(files, capsys, extra, message):
    (files / "short.txt").write_text("a\na\n", encoding="utf-8")
    extra = [str(files / x) if x.endswith((".txt", ".tsv")) else x for x in extra]
    code = main(["score", SPEC, "-c", str(files / "c.txt"), "-r", str(files / "r.txt"), "--no-progress", *extra])
    assert code != 0 and message in capsys.readouterr().err
