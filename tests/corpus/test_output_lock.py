"""One run per output: a second ``score -o``/``mbr -o`` on an output another run
is writing is refused, naming the holder's PID, and the first run finishes intact.

The first test runs two real CLI processes: the first is paused (SIGSTOP) while it holds the
output mid-run, so the second surely meets it, then resumed. On main without the lock the
second run scored into the same partial file and renamed it (a complete-looking file with NUL
bytes, and "No such file" in the first). The others hold a real lock from this process.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlgscore.cli import main
from nlgscore.corpus.outputs.lock import OutputLock, lock_path

WORDS = "the a cat dog sat ran on under mat rug today night cold warm house tree".split()
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")


def _corpus(folder: Path, n: int = 48) -> None:
    rng = random.Random(3)
    for name in ("c.txt", "r.txt"):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) for _ in range(n)]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _score_command(out: Path):
    return [
        sys.executable,
        "-m",
        "nlgscore",
        "score",
        "bertscore:minilm:L1",
        "-c",
        "c.txt",
        "-r",
        "r.txt",
        "-o",
        str(out),
        "--window",
        "4",
        "--no-progress",
        "--device",
        "cpu",
    ]


def test_a_second_score_run_on_the_same_output_is_refused_naming_the_pid(tmp_path):
    _corpus(tmp_path)
    out = tmp_path / "scores.tsv"
    checkpoint = tmp_path / "scores.tsv.ckpt.json"
    first = subprocess.Popen(
        _score_command(out), cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 180
        while first.poll() is None and time.monotonic() < deadline:
            try:
                if json.loads(checkpoint.read_text())["done"] >= 4:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.002)
        first.send_signal(signal.SIGSTOP)  # holds the output mid-run while the second one starts
        assert first.poll() is None, "the first run ended before it could be paused"
        second = subprocess.run(_score_command(out), cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
        first.send_signal(signal.SIGCONT)
        stdout, stderr = first.communicate(timeout=300)
    finally:
        first.kill()
        first.wait()
    assert second.returncode == 2, second.stderr[-2000:]
    err = second.stderr.strip().splitlines()
    assert len(err) == 1 and f"PID {first.pid}" in err[0] and "scores.tsv" in err[0], second.stderr
    assert first.returncode == 0, stderr[-2000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "precision\trecall\tf1" and len(lines) == 49 and "\0" not in out.read_text(encoding="utf-8")
    assert all(len([float(v) for v in line.split("\t")]) == 3 for line in lines[1:])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "r.txt", "scores.tsv"]  # lock and sidecars gone


def _items(path: Path) -> Path:
    path.write_text(
        json.dumps({"id": "a", "candidates": ["A cat sat.", "The cat sat.", "Rain."]}) + "\n", encoding="utf-8"
    )
    return path


@pytest.mark.parametrize("held", ["output", "matrix"])
def test_mbr_refuses_an_output_or_matrix_file_another_run_holds(tmp_path, capsys, held):
    items = _items(tmp_path / "items.jsonl")
    out, npz = tmp_path / "chosen.jsonl", tmp_path / "u.npz"
    args = ["mbr", str(items), "--metric", "bertscore:minilm:L2", "--no-progress", "--matrix-out", str(npz)]
    args += ["-o", str(out)] if held == "output" else []  # matrix: the choices go to stdout
    lock = OutputLock(out if held == "output" else npz)
    try:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert (
            f"PID {os.getpid()}" in err and "being written by another run" in err and len(err.strip().splitlines()) == 1
        )
        assert not npz.exists() and not out.exists()
    finally:
        lock.release()
    assert main(args) == 0 and npz.exists()
    assert not lock_path(out).exists() and not lock_path(npz).exists()


def test_a_stale_lock_file_does_not_block_and_a_failed_run_releases_its_lock(tmp_path, minilm_scorer):
    from nlgscore.mbr import decode_to_file

    out = tmp_path / "chosen.jsonl"
    lock_path(out).write_text("999999\n")  # left by a run killed with -9: no one holds the lock
    items = [["A cat sat.", "The cat sat."], ["Rain.", "It rains."]]
    with pytest.raises(ValueError, match="column"):
        decode_to_file(minilm_scorer, items, out, column="nope")
    decode_to_file(minilm_scorer, items, out, restart=True)  # not refused: the failed run let go
    assert len(out.read_text().splitlines()) == 2 and not lock_path(out).exists()


def test_a_busy_output_is_refused_before_the_model_loads(tmp_path, minilm_scorer):
    from nlgscore.mbr import decode_to_file

    out, built = tmp_path / "chosen.jsonl", []
    with OutputLock(out):
        with pytest.raises(ValueError, match=f"PID {os.getpid()}"):
            decode_to_file(lambda: built.append(1) or minilm_scorer, [["A cat.", "The cat."]], out)
    assert built == []  # refused before the metric was built
    decode_to_file(lambda: built.append(1) or minilm_scorer, [["A cat.", "The cat."]], out)
    assert built == [1] and out.exists()
