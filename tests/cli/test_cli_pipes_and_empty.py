"""Inputs that are streams or empty.

* A named pipe and bash's process substitution (``-c <(...)``, which passes ``/dev/fd/63``) are
  read, streamed once, instead of "file not found"; with ``-o`` too (a pipe is not hashed: the
  resumable run checks its rows as it reads them).
* An empty input (no lines, or a table with a header and no rows) is an error naming the file,
  exit 2, where it printed ``f1: nan`` and exited 0; nothing is written with ``-o``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nlgscore.cli import main

SPEC = "bertscore:minilm:L2"
PREDS = ["the cat sat on the mat", "it is freezing today"]
REFS = ["a cat was on the mat", "the weather is cold today"]
ROOT = Path(__file__).resolve().parents[2]


def fifo_with(path: Path, lines) -> threading.Thread:
    """A named pipe at ``path`` that a thread fills with ``lines`` once a reader opens it."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


def scores(capsys, *argv: str):
    status = main([*argv, "--json", "--no-progress"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


@pytest.fixture
def expected(tmp_path, capsys):
    (tmp_path / "c.txt").write_text("\n".join(PREDS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return scores(capsys, "score", SPEC, "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"))["f1"]


@pytest.mark.parametrize("command", [["score", SPEC], ["bertscore", "--model", "minilm", "--num-layers", "2"]])
def test_named_pipes_are_read(tmp_path, capsys, expected, command):
    feeders = [fifo_with(tmp_path / "cands.fifo", PREDS), fifo_with(tmp_path / "refs.fifo", REFS)]
    got = scores(capsys, *command, "-c", str(tmp_path / "cands.fifo"), "-r", str(tmp_path / "refs.fifo"))["f1"]
    assert got == pytest.approx(expected, abs=1e-6)
    for feeder in feeders:
        feeder.join(10)


def test_named_pipes_are_read_by_a_resumable_run(tmp_path, capsys, expected):
    feeders = [fifo_with(tmp_path / "cands.fifo", PREDS), fifo_with(tmp_path / "refs.fifo", REFS)]
    out = tmp_path / "scores.jsonl"
    summary = scores(
        capsys, "score", SPEC, "-c", str(tmp_path / "cands.fifo"), "-r", str(tmp_path / "refs.fifo"), "-o", str(out)
    )
    assert summary["items"] == 2
    assert [json.loads(line)["f1"] for line in out.read_text().splitlines()] == pytest.approx(expected, abs=1e-6)
    for feeder in feeders:
        feeder.join(10)


def test_mbr_reads_its_items_from_a_named_pipe(tmp_path, capsys):
    rows = [
        json.dumps({"id": "a", "candidates": PREDS + REFS[:1]}),
        json.dumps({"id": "b", "candidates": REFS + PREDS[:1]}),
    ]
    (tmp_path / "items.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    feeder = fifo_with(tmp_path / "items.fifo", rows)
    printed = []
    for path in (tmp_path / "items.jsonl", tmp_path / "items.fifo"):
        status = main(["mbr", str(path), "--metric", SPEC, "--no-progress", "--quiet"])
        captured = capsys.readouterr()
        assert status == 0, captured.err
        printed.append([json.loads(line) for line in captured.out.splitlines()])
    feeder.join(10)
    assert [row["id"] for row in printed[1]] == ["a", "b"]
    assert [row["best_index"] for row in printed[1]] == [row["best_index"] for row in printed[0]]
    for got, want in zip(printed[1], printed[0]):
        assert got["expected_utility"] == pytest.approx(want["expected_utility"], abs=1e-6)


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")
def test_process_substitution_is_read(expected):
    command = (
        f"{sys.executable} -m nlgscore score {SPEC} -c <(printf '{PREDS[0]}\\n{PREDS[1]}\\n') "
        f"-r <(printf '{REFS[0]}\\n{REFS[1]}\\n') --json --no-progress"
    )
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["f1"] == pytest.approx(expected, abs=1e-6)


def assert_empty_refused(capsys, argv, name: str) -> None:
    status = main([*argv, "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.strip().endswith(f"error: {name} is empty: there is nothing to score (no lines or rows)"), err
    assert "nan" not in err


def test_empty_text_files_are_an_error_naming_the_file(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert_empty_refused(capsys, ["score", SPEC, "-c", str(empty), "-r", str(empty)], str(empty))
    assert_empty_refused(capsys, ["bertscore", "--model", "minilm", "-c", str(empty), "-r", str(empty)], str(empty))
    out = tmp_path / "scores.tsv"
    assert_empty_refused(capsys, ["score", SPEC, "-c", str(empty), "-r", str(empty), "-o", str(out)], str(empty))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt"]  # nothing written


def test_a_table_without_rows_is_an_error_naming_the_file(tmp_path, capsys):
    table = tmp_path / "header_only.csv"
    table.write_text("prediction,reference\n", encoding="utf-8")
    assert_empty_refused(capsys, ["score", SPEC, "-i", str(table)], str(table))


def test_an_empty_stdin_is_an_error_naming_stdin(tmp_path, capsys, monkeypatch):
    refs = tmp_path / "r.txt"
    refs.write_text("", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    assert_empty_refused(capsys, ["score", SPEC, "-c", "-", "-r", str(refs)], "<stdin>")
