"""``make demo`` installs the package with ``[embedded]`` only (its own stamp, never the test
extra's frameworks) and prints the system P/R/F1 on its own labelled line, apart from the
signature. The install is read with ``make -n`` (nothing is installed); the demo's script runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_demo_installs_only_the_embedded_extra(tmp_path):
    venv = tmp_path / "venv"  # a fresh place: make plans the whole install
    plan = subprocess.run(
        ["make", "-n", "demo", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in plan.splitlines() if "pip install" in line and "-e " in line]
    assert installs and all('".[embedded]"' in line for line in installs), plan
    assert ".[test]" not in plan and f"{venv}/.installed-demo" in plan


def test_demo_prints_the_system_line_apart_from_the_signature():
    done = subprocess.run(
        [sys.executable, "scripts/demo.py", "examples/cands.txt", "examples/refs.txt", "examples/refs2.txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "P\tR\tF1" and len(lines) == 1 + 5 + 2
    system, signature = lines[-2], lines[-1]
    assert system.startswith("System P/R/F1: ") and len(system.split()) == 5 and "nlgscore:" not in system
    assert signature.startswith("Signature: nlgscore:bertscore|") and "F1:" not in signature
    rows = [[float(v) for v in line.split("\t")] for line in lines[1:6]]
    assert [float(v) for v in system.split()[2:]] == pytest.approx(
        [sum(col) / 5 for col in zip(*rows)], abs=2e-6
    )  # 6 printed decimals
