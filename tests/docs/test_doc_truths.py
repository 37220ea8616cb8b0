"""Statements of the README and the documentation pages checked against the code.

* Every ``--flag`` of an ``nlgscore COMMAND`` line in a code block is an option of that command
  (a renamed flag cannot survive in a recipe, run or not).
* The Makefile's torch install takes ``TORCH_INDEX`` (the CPU build on a stock machine), as the
  README says: checked with ``make -n``.
* The bf16 |ΔF| of the BERTScore page is the largest of BENCHMARKS.md's measured MiniLM rows.
* "Same bits": the tests the page cites exist and hold ``==`` checks; the 16 it quotes for padded
  lengths and product rows is the code's.
* The embedded model's default layer is the one the generated table marks.
* No install figure (size, distributions, time) is stated on the set-up pages: BENCHMARKS.md's
  measured table carries them, in the columns of the script that measures them.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest
from cli_reference import subcommands
from markdown_blocks import ROOT, blocks, pages

from nlgscore.cli import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")
BERTSCORE = (ROOT / "docs" / "metrics" / "bertscore.md").read_text(encoding="utf-8")


def options_of(words: list[str]) -> set:
    """The option strings of ``nlgscore WORDS...`` (a command and its sub-commands, as far as named)."""
    parser = build_parser(words[:1])
    for word in words:
        if word not in subcommands(parser):
            break
        parser = subcommands(parser)[word]
    return {flag for action in parser._actions for flag in action.option_strings}


def nlgscore_lines():
    for page in pages():
        for block in blocks(page):
            if block.language in ("bash", "console"):
                for line in block.code.replace("\\\n", " ").splitlines():
                    line = line.removeprefix("$ ").split(" #")[0].strip()
                    if line.startswith("nlgscore ") or line.startswith("HF_HUB_OFFLINE=1 nlgscore "):
                        yield block.where, shlex.split(line.split("nlgscore ", 1)[1].rstrip("&").strip())


def test_every_flag_in_a_documented_command_is_the_commands():
    seen = 0
    for where, words in nlgscore_lines():
        positional = [w for w in words if not w.startswith("-")][:3]  # meta select-model DATASET: three levels
        known = options_of(positional)
        for word in words:
            if word.startswith("--") or re.fullmatch(r"-[a-zA-Z]", word):
                flag = word.split("=")[0]
                assert flag in known, f"{where}: nlgscore {' '.join(positional)} has no option {flag}"
                seen += 1
    assert seen > 30  # the pages hold many commands; a reader that found none would pass vacuously


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_takes_the_torch_index():
    assert "TORCH_INDEX=https://download.pytorch.org/whl/cpu" in README
    with_index = subprocess.run(
        ["make", "-n", "-B", "install", "TORCH_INDEX=https://download.pytorch.org/whl/cpu"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert re.search(r"pip install --quiet --index-url https://download.pytorch.org/whl/cpu .*\"torch==", with_index)
    plain = subprocess.run(["make", "-n", "-B", "install"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "--index-url" not in plain and '"torch==' in plain


def test_the_readme_keeps_its_two_commands_and_its_length():
    assert "make demo" in README and "make test" in README
    assert len(README.splitlines()) <= 250


def test_the_bf16_figure_is_the_largest_measured():
    """The BERTScore page's bf16 |ΔF| is the largest of BENCHMARKS.md's measured MiniLM rows (not a smaller subset's)."""
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    start = benchmarks.index("## CPU bfloat16")
    end = benchmarks.find("\n## ", start + 1)  # that section only: later sections have MiniLM rows too (GPU)
    section = benchmarks[start : end if end != -1 else None]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| MiniLM (embedded)")]
    assert rows, "no MiniLM rows in BENCHMARKS.md's CPU bfloat16 section"
    largest = max(float(cells[6]) for cells in rows)
    stated = re.search(r"the largest \|ΔF\| measured\s+against float32 is ([0-9.]+)", BERTSCORE)
    assert stated and float(stated.group(1)) == largest


def test_the_same_bits_section_names_real_tests_and_constants():
    from nlgscore.backend import batching, gemm

    start = BERTSCORE.index("## Same bits, whatever the call holds")
    section = BERTSCORE[start : BERTSCORE.index("\n## ", start + 1)]
    cited = set(re.findall(r"tests/(?:\w+/)?test_\w+\.py", section))
    assert {
        "tests/test_batch_invariance.py",
        "tests/serve/test_serve_bits.py",
        "tests/backend/test_distributed.py",
    } <= cited
    for path in cited:
        assert " == " in (ROOT / path).read_text(encoding="utf-8"), path
    assert "next multiple of 16" in section and batching.LENGTH_MULTIPLE == 16 and batching.padded_length(16) == 32
    assert "at least 16 rows" in section and gemm.MIN_ROWS == 16


def test_the_embedded_models_default_layer_is_the_tables():
    from nlgscore.backend.tables import table

    layer = table("bertscore_model2layers")["all-MiniLM-L6-v2"]
    assert f"**BERTScore F, layer {layer} (default)**" in (ROOT / "docs" / "embedded_model.md").read_text(
        encoding="utf-8"
    )
    assert f"Layer {layer} is the default" in BERTSCORE


# a size, a count of distributions or a duration, as an install figure would be stated
INSTALL_FIGURE = re.compile(r"\d[\d.,]* ?(?:GB|MB|GiB|MiB|distributions|packages|minutes|min|seconds|s)\b")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else None]


def test_the_install_figures_are_measured_not_stated():
    """The set-up pages state no size, count or time of an install (they change with every
    dependency); BENCHMARKS.md's "Installs" table carries them, as the script that measures them
    prints them, and the README names the script."""
    setup = _section(README, "## Set-up")
    install = _section((ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8"), "## Installation")
    for where, text in (("README.md's set-up", setup), ("getting-started.md's installation", install)):
        assert not INSTALL_FIGURE.findall(text), f"{where} states an install figure: measure it in BENCHMARKS.md"
    assert "python -m benchmarks install_sizes" in setup
    script = (ROOT / "benchmarks" / "scripts" / "install_sizes.py").read_text(encoding="utf-8")
    table = _section((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"), "### Installs")
    header = "| target | installs | size of `.venv` | distributions | time to a new `.venv` |"
    assert header in script and header in table
    rows = [line for line in table.splitlines() if line.startswith("| `make ")]
    assert [row.split("|")[1].strip() for row in rows] == ["`make demo`", "`make test`"]
    assert "python -m benchmarks install_sizes" in table
