"""A write that fails (a full disk, stdout included) is one line and exit status 2 in every command.

``bertscore --json > file`` on a full disk exited 0 with a truncated file (Python
3.11's buffered stdout drops the error of one large write), and ``score -o``, ``show -o`` and
``meta --json-out`` printed a traceback calling it a bug. The disk here is real: a 64 KiB tmpfs
mounted for the test (root only; skipped with the reason otherwise), and /dev/full for stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


def nlgscore(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nlgscore", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=300,
    )


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KiB file system, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> None:
    """Leave no free block on ``disk``."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """6,000 lines (one distinct pair, scored once): --seg and --json print more than the disk holds."""
    folder = tmp_path_factory.mktemp("corpus")
    path = folder / "lines.txt"
    path.write_text("a cat sat on the mat\n" * 6000, encoding="utf-8")
    return path


def assert_one_line_write_error(done: subprocess.CompletedProcess, command: str, names: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"nlgscore {command}: error: cannot write") and "No space left on device" in lines[0], (
        lines[0]
    )
    assert names in lines[0], lines[0]


def test_stdout_into_a_full_disk_is_exit_2(small_disk, corpus):
    """One large write that fills the disk part-way (the case Python 3.11 dropped silently)."""
    with open(small_disk / "out.txt", "w") as out:
        done = nlgscore(
            "bertscore", "-c", str(corpus), "-r", str(corpus), "--model", "minilm", "--seg", "--no-progress", stdout=out
        )
    assert_one_line_write_error(done, "bertscore", "stdout")


def test_stdout_on_dev_full_is_exit_2(corpus):
    with open("/dev/full", "w") as out:
        done = nlgscore(
            "bertscore",
            "-c",
            str(corpus),
            "-r",
            str(corpus),
            "--model",
            "minilm",
            "--json",
            "--no-progress",
            stdout=out,
        )
    assert_one_line_write_error(done, "bertscore", "stdout")


def test_score_output_on_a_full_disk_is_exit_2(small_disk, tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("a b c\n" * 12000, encoding="utf-8")  # 12,000 rows of scores: ~150 KiB of TSV
    out = small_disk / "scores.tsv"
    done = nlgscore("score", "bertscore:minilm", "-c", str(lines), "-r", str(lines), "-o", str(out), "--no-progress")
    assert_one_line_write_error(done, "score", f"-o {out}")
    assert not out.exists()  # never a file that looks complete


def test_show_output_on_a_full_disk_is_exit_2(small_disk):
    fill(small_disk)
    out = small_disk / "pair.png"
    done = nlgscore("show", "--cand", "a cat", "--ref", "the cat", "--model", "minilm", "-o", str(out))
    assert_one_line_write_error(done, "show", f"-o {out}")


@pytest.mark.skipif(not (DATA / "wmt-kk-en.jsonl").is_file(), reason="needs ../shared/data/wmt-kk-en.jsonl")
def test_meta_json_out_on_a_full_disk_is_exit_2(small_disk):
    fill(small_disk)
    out = small_disk / "table.json"
    done = nlgscore(
        "meta", "wmt19", "--data", str(DATA), "--lp", "kk-en", "--metric", "chrf", "--json-out", str(out), "--quiet"
    )
    assert_one_line_write_error(done, "meta", f"--json-out {out}")


def test_output_written_in_full_when_there_is_room(tmp_path, corpus):
    """The checked stdout changes nothing when the disk has room: every line arrives."""
    with open(tmp_path / "out.txt", "w") as out:
        done = nlgscore(
            "bertscore", "-c", str(corpus), "-r", str(corpus), "--model", "minilm", "--seg", "--no-progress", stdout=out
        )
    assert done.returncode == 0, done.stderr
    assert (
        len((tmp_path / "out.txt").read_text().splitlines()) == 6000 + 2
    )  # the --seg lines, the system line and the signature
