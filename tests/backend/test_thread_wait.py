"""Idle OpenMP threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, set by ``import
nlgscore`` before torch loads, a user's own setting kept), and neither the wait policy nor the
thread count changes a score's bits: one pair and 64 pairs are bit-identical across 1 and 2
threads, passive and active."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "NLGSCORE_THREADS")}
SCORE = """
import json, os, nlgscore, torch  # nlgscore first: it sets the wait policy before torch loads
words = "the a cat dog sat on mat ran fast slow house tree river blue green quickly under over".split()
preds = [" ".join(words[(i * 7 + k * 3) % len(words)] for k in range(5 + i % 30)) for i in range(64)]
refs = [" ".join(words[(i * 5 + k * 2) % len(words)] for k in range(4 + i % 25)) for i in range(64)]
scorer = nlgscore.load("bertscore:minilm")
one = scorer.compute(preds[:1], refs[:1]).scores
many = scorer.compute(preds, refs).scores
scores = [x.hex() for x in one + many]
print(json.dumps({"threads": torch.get_num_threads(), "policy": os.environ.get("OMP_WAIT_POLICY"), "scores": scores}))
"""


def _run(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**BASE, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_sets_a_passive_wait_unless_the_user_chose():
    assert _run("import os, nlgscore; print(os.environ.get('OMP_WAIT_POLICY'))") == "PASSIVE"
    assert _run("import os, nlgscore; print(os.environ.get('OMP_WAIT_POLICY'))", OMP_WAIT_POLICY="active") == "active"


@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True, reason="needs 2 CPUs"
)
def test_threads_and_wait_policy_never_change_the_bits():
    runs = [
        json.loads(_run(SCORE, NLGSCORE_THREADS=threads, **policy))
        for threads, policy in (("1", {}), ("2", {}), ("2", {"OMP_WAIT_POLICY": "ACTIVE"}))
    ]
    assert [(r["threads"], r["policy"]) for r in runs] == [(1, "PASSIVE"), (2, "PASSIVE"), (2, "ACTIVE")]
    assert runs[0]["scores"] == runs[1]["scores"] == runs[2]["scores"]
