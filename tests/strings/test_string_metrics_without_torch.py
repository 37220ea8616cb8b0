"""chrF, BLEU and ROUGE need no model: scoring them, through the command line or the library, never
imports torch or transformers (their import is seconds of a 5-line ``nlgscore score chrf``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sacrebleu")
pytest.importorskip("rouge_score")

REPO = Path(__file__).resolve().parents[2]
CANDS, REFS, REFS2 = (str(REPO / "examples" / name) for name in ("cands.txt", "refs.txt", "refs2.txt"))
ENV = dict(os.environ, HF_HUB_OFFLINE="1")
HEAVY = "torch", "transformers"


def _modules_after(code: str) -> str:
    check = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", check], env=ENV, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("spec", ["chrf", "bleu", "bleu:moses", "rouge:L"])
def test_the_command_line_scores_without_torch(spec):
    args = ["score", spec, "-c", CANDS, "-r", REFS, "-r", REFS2, "--json"]
    assert _modules_after(f"from nlgscore.cli import main\nassert main({args!r}) == 0") == "[]"


def test_the_library_scores_without_torch():
    code = (
        "import nlgscore\n"
        "for spec in ('chrf', 'bleu', 'rouge1'):\n"
        "    result = nlgscore.load(spec).compute(['the cat sat'], [['the cat sat', 'a cat sat']])\n"
        "    assert result.scores and str(result.signature)\n"
    )
    assert _modules_after(code) == "[]"


def test_import_nlgscore_stays_cheap():
    assert _modules_after("import nlgscore") == "[]"
