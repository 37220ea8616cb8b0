"""README statements checked against the code.

* The command-line paragraph lists the flags the scoring commands really share, and those
  `nlgscore score` adds (it omitted --dtype, -o, --window and -i): read from the parsers.
* The Makefile's torch install takes ``TORCH_INDEX`` (the CPU build on a stock machine), as the
  README says: checked with ``make -n``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nlgscore.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCORING = ("bertscore", "prism", "bartscore")


def cli_paragraph() -> str:
    start = README.index("Every scoring command reads files")
    return README[start:README.index("<!-- cli-flags:", start)]


def options_of(command: str) -> set:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


def test_the_shared_flag_list_is_the_parsers():
    listed = set(re.findall(r"`(-{1,2}[a-z][a-z-]*)", cli_paragraph()))
    shared = set.intersection(*(options_of(c) for c in SCORING))
    score = options_of("score")
    for flag in listed:
        assert flag in score or flag in shared, f"README lists {flag}, which no scoring command has"
    # every shared option is listed (help and aliases aside)
    aliases = {"-h", "--help", "--progress", "-m", "-b", "--cands", "--refs", "--srcs", "--batch_size", "--num_layers"}
    for flag in shared - aliases:
        assert flag in listed, f"README's shared flag list omits {flag}"
    for flag in ("--dtype", "-o", "--window", "-i", "--lang"):
        assert flag in listed and flag in score


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_takes_the_torch_index():
    assert "TORCH_INDEX=https://download.pytorch.org/whl/cpu" in README
    with_index = subprocess.run(["make", "-n", "-B", "install", "TORCH_INDEX=https://download.pytorch.org/whl/cpu"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert re.search(r"pip install --quiet --index-url https://download.pytorch.org/whl/cpu .*\"torch==", with_index)
    plain = subprocess.run(["make", "-n", "-B", "install"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "--index-url" not in plain and '"torch==' in plain


def test_the_bf16_figure_is_the_largest_measured():
    """README's bf16 |ΔF| is the largest of BENCHMARKS.md's measured MiniLM rows (not a smaller subset's)."""
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    start = benchmarks.index("## CPU bfloat16")
    end = benchmarks.find("\n## ", start + 1)  # that section only: later sections have MiniLM rows too (GPU)
    section = benchmarks[start : end if end != -1 else None]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| MiniLM (embedded)")]
    assert rows, "no MiniLM rows in BENCHMARKS.md's CPU bfloat16 section"
    largest = max(float(cells[6]) for cells in rows)
    stated = re.search(r"the largest \|ΔF\| measured\s+against float32 is ([0-9.]+)", README)
    assert stated and float(stated.group(1)) == largest


def test_the_same_bits_paragraph_names_real_tests_and_constants():
    """README "Same bits": the tests it cites exist and hold ``==`` checks; the 16 it quotes for
    padded lengths and product rows is the code's."""
    from nlgscore.backend import batching, gemm

    start = README.index("**Same bits, whatever the call holds**")
    paragraph = README[start:README.index("\n\n", start)]
    cited = set(re.findall(r"tests/(?:\w+/)?test_\w+\.py", paragraph))
    assert {"tests/test_batch_invariance.py", "tests/serve/test_serve_bits.py", "tests/backend/test_distributed.py"} <= cited
    for path in cited:
        assert " == " in (ROOT / path).read_text(encoding="utf-8"), path
    assert "next multiple of 16" in paragraph and batching.LENGTH_MULTIPLE == 16 and batching.padded_length(16) == 32
    assert "at least 16 rows" in paragraph and gemm.MIN_ROWS == 16
