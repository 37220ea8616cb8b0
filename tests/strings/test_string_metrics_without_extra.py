"""Without the ``meta`` extra (as after ``make demo``, which installs ``[embedded]`` only), building
a string metric fails at once with one line naming the extra: ``nlgscore.load("chrf")`` raises
MissingExtraError, not the first ``compute``, and its traceback is a few frames, not importlib's
chained ImportError above it. The packages are blocked in a subprocess by a ``sys.meta_path``
finder, so the test needs no second environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CANDS, REFS = (str(REPO / "examples" / name) for name in ("cands.txt", "refs.txt"))
BLOCK = """
import sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Blocked())
"""
# A traceback of the few frames from the caller to the refusal; the chained ImportError made it 50.
MAX_LINES = 25


def run(blocked, code):
    done = subprocess.run(
        [sys.executable, "-c", BLOCK.format(blocked=set(blocked)) + code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "spec, blocked, message",
    [
        ("chrf", ["sacrebleu"], "chrF needs the package 'sacrebleu': pip install 'nlgscore[meta]'"),
        ("bleu", ["sacrebleu"], "BLEU needs the package 'sacrebleu': pip install 'nlgscore[meta]'"),
        (
            "bleu:moses",
            ["sacremoses"],
            "the Moses-tokenised BLEU needs the package 'sacremoses': pip install 'nlgscore[meta]'",
        ),
        (
            "rouge:L",
            ["rouge_score"],
            "ROUGE needs the package 'rouge_score': pip install 'nlgscore[meta]'",
        ),
    ],
)
def test_building_a_string_metric_without_its_extra_fails_in_one_line(spec, blocked, message):
    code, out, err = run(blocked, f"import nlgscore\nscorer = nlgscore.load({spec!r})\nprint('built')\n")
    lines = err.strip().splitlines()
    assert code == 1 and "built" not in out, (out, err)
    assert lines[-1] == f"nlgscore.backend.extras.MissingExtraError: {message}", err
    assert "During handling" not in err and "direct cause" not in err and err.count("Traceback") == 1, err
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines:\n{err}"


def test_the_command_line_says_it_in_one_line():
    code, out, err = run(
        ["sacrebleu"],
        f"from nlgscore.cli import main\nsys.exit(main(['score', 'chrf', '-c', {CANDS!r}, '-r', {REFS!r}]))\n",
    )
    assert code == 2 and not out, (out, err)
    assert err.strip() == "nlgscore score: error: chrF needs the package 'sacrebleu': pip install 'nlgscore[meta]'"
