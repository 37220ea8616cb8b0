"""A resumed ``-o`` run says once on stderr how far the earlier run got: ``nlgscore score:
resuming OUT after N of M rows`` (M counted for files on disk; ``after N rows`` for stdin), ``nlgscore
mbr: resuming OUT after N of M items``; nothing under ``--quiet``, nothing for a fresh run.
The earlier run is a real one stopped by Ctrl-C (KeyboardInterrupt) during its third call of the
metric, which is otherwise the real chrF."""

from __future__ import annotations

import io
import json
import sys

import pytest

pytest.importorskip("sacrebleu")

from nlgscore.cli import main
from nlgscore.strings.scorers import ChrFScorer

ROWS = 12
CANDS = [f"the cat {k} sat on the mat" for k in range(ROWS)]
REFS = [f"a cat {k} was on a mat" for k in range(ROWS)]


@pytest.fixture
def interrupt_third_call(monkeypatch):
    """ChrFScorer's ``method`` raises KeyboardInterrupt at its third call (as Ctrl-C would); undone by ``stop()``."""

    def install(method: str):
        real, calls = getattr(ChrFScorer, method), []

        def third(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return real(self, *args, **kwargs)

        monkeypatch.setattr(ChrFScorer, method, third)
        return lambda: monkeypatch.setattr(ChrFScorer, method, real)

    return install


def corpus(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(CANDS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return str(tmp_path / "c.txt"), str(tmp_path / "r.txt")


def resume_lines(err: str):
    return [line for line in err.splitlines() if "resuming" in line]


@pytest.mark.parametrize("quiet", [False, True])
def test_a_resumed_score_run_says_how_far_the_earlier_one_got(tmp_path, capsys, interrupt_third_call, quiet):
    cands, refs = corpus(tmp_path)
    out = tmp_path / "scores.tsv"
    command = ["score", "chrf", "-c", cands, "-r", refs, "-o", str(out), "--window", "2", "--no-progress"]
    stop = interrupt_third_call("compute")
    assert main(command) == 130  # two windows of 2 rows checkpointed, the third interrupted
    assert resume_lines(capsys.readouterr().err) == []  # a fresh run has nothing to resume
    stop()
    assert main([*command, *(["--quiet"] if quiet else [])]) == 0
    captured = capsys.readouterr()
    expected = [] if quiet else [f"nlgscore score: resuming {out} after 4 of {ROWS} rows"]
    assert resume_lines(captured.err) == expected, captured.err
    assert len(out.read_text().splitlines()) == 1 + ROWS
    assert main([*command, "--restart"]) == 0 and resume_lines(capsys.readouterr().err) == []


def test_a_resumed_run_from_stdin_says_how_many_rows_without_a_total(
    tmp_path, capsys, monkeypatch, interrupt_third_call
):
    _, refs = corpus(tmp_path)
    out = tmp_path / "scores.jsonl"
    command = ["score", "chrf", "-c", "-", "-r", refs, "-o", str(out), "--window", "2", "--no-progress"]

    def stdin():
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(("\n".join(CANDS) + "\n").encode("utf-8"))))

    stop = interrupt_third_call("compute")
    stdin()
    assert main(command) == 130
    stop()
    stdin()
    assert main(command) == 0
    assert resume_lines(capsys.readouterr().err) == [f"nlgscore score: resuming {out} after 4 rows"]


def test_a_resumed_mbr_run_says_how_many_items_of_how_many(tmp_path, capsys, interrupt_third_call):
    items = tmp_path / "items.jsonl"
    rows = [{"id": k, "candidates": [f"a cat {k}", f"the cat {k}", "a dog"]} for k in range(5)]
    items.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "chosen.jsonl"
    command = ["mbr", str(items), "--metric", "chrf", "--chunk", "1", "-o", str(out), "--no-progress"]
    stop = interrupt_third_call("matrix")
    assert main(command) == 130
    stop()
    assert main(command) == 0
    assert resume_lines(capsys.readouterr().err) == [f"nlgscore mbr: resuming {out} after 2 of 5 items"]
    assert len(out.read_text().splitlines()) == 5
