"""Progress bars inform, never litter: a job shorter than the bar's delay draws nothing, even on a
terminal, and a stderr that is not a terminal (a pipe, a log file) never gets a bar, so it never
holds carriage-return redraws or cursor-movement escape codes (nested bars)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from terminal import run_on_terminal

from nlgscore.backend.progress import DELAY_S, draws_bars, progress_bar

REPO = Path(__file__).resolve().parents[2]
CANDS, REFS = str(REPO / "examples" / "cands.txt"), str(REPO / "examples" / "refs.txt")
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
CLI = [sys.executable, "-m", "nlgscore"]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_policy_draws_on_a_terminal_only_after_the_delay():
    assert DELAY_S >= 1.0
    shown = Terminal()
    with progress_bar(total=3, file=shown, delay=0) as bar:  # a job past its delay on a terminal: drawn
        bar.update(3)
    assert "3/3" in shown.getvalue()
    short = Terminal()
    with progress_bar(total=3, file=short) as bar:  # finished before the delay: nothing
        bar.update(3)
    assert short.getvalue() == ""
    piped = io.StringIO()
    with progress_bar(total=3, file=piped, delay=0) as bar:  # not a terminal: never, however long
        bar.update(3)
    assert piped.getvalue() == "" and bar.disable and not draws_bars(piped)


@pytest.mark.parametrize("spec", ["chrf", "bertscore:minilm"])
def test_piped_stderr_gets_no_bar_and_no_escape_codes(spec):
    done = subprocess.run(
        CLI + ["score", spec, "-c", CANDS, "-r", REFS, "--progress"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "\x1b" not in done.stderr and "%|" not in done.stderr, done.stderr


def test_a_five_line_job_on_a_terminal_draws_no_bar():
    code, _, seen = run_on_terminal(
        CLI + ["score", "chrf", "-c", CANDS, "-r", REFS, "--progress"], env=ENV, timeout=300, cwd=REPO
    )
    assert code == 0
    assert b"%|" not in seen and b"item/s" not in seen, seen


def test_a_long_job_on_a_terminal_draws_its_bar():
    script = (
        "import time\nfrom nlgscore.backend.progress import progress_bar\nwith progress_bar(total=2, unit='step') as bar:\n"
        f"    time.sleep({DELAY_S} + 1.0)\n    bar.update(2)\n"
    )
    code, _, seen = run_on_terminal([sys.executable, "-c", script], env=ENV, timeout=120, cwd=REPO)
    assert code == 0 and b"2/2" in seen, seen
