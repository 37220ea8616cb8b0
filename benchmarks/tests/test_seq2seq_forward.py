"""The seq2seq forward benchmark (``python -m benchmarks seq2seq_forward``) in its tiny form: both golden
checkpoints through the padded engine and the token forward, run as a user runs it. It checks
that every row is printed and that the two forwards agree within the house tolerance; it never
asserts a timing (the machine is shared and noisy)."""

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "wmt-kk-en.jsonl"


def test_both_forwards_score_every_model_alike():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "seq2seq_forward", "--data", str(DATA)]
        + ["--pairs", "6", "--rounds", "1", "--no-base"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = re.findall(r"^\| (BARTScore, tiny-bart|Prism-ref, tiny-prism) \| (.*) \|$", done.stdout, re.M)
    assert [name for name, _ in rows] == ["BARTScore, tiny-bart", "Prism-ref, tiny-prism"]
    for _, cells in rows:
        padded, tokens, _, diff = (cell.strip() for cell in cells.split("|"))
        assert float(padded.replace(",", "")) > 0 and float(tokens.replace(",", "")) > 0
        assert float(diff) <= 1e-5  # the token forward's bound against the padded engine (its tests say why)
