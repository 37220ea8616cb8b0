"""Every code block of README.md and the documentation pages runs as written.

Each page runs top to bottom, as a reader would: its ``python`` blocks in one namespace, in order,
with its ``bash``/``console`` blocks between them (each with ``bash -e``, so the first failing line
fails the block), the working directory at the repository root and ``nlgscore`` on PATH from this
interpreter's environment. What a page writes at the root (``scores.tsv``, ``items.jsonl`` ...) is
removed after it. ``text`` blocks are output; a block fenced with ``notest`` is not run, and the
paragraph before it must say why.

The ``python`` blocks are taken with mktestdocs' ``grab_code_blocks(text, lang="python")``: it
returns only the blocks whose info string is exactly ``python``, so ``python notest`` and
CONTRIBUTING's ``python file=PATH`` blocks are left out by construction, and it is a plain
function, so a page's blocks can share one namespace. pytest-markdown-docs, the other candidate,
runs each block in a fresh namespace unless the block is tagged ``continuation``, which nearly
every block here would need.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_blocks import ROOT, blocks, commands, page_id, pages
from mktestdocs import grab_code_blocks

LANGUAGES = ("python", "bash", "console", "text")
NEEDS_DATA = re.compile(r"<!-- docs-test: needs-data (\S+) -->")
RUNNABLE = [p for p in pages() if any(b.runs for b in blocks(p))]


def data_dir() -> Path:
    return Path(os.environ.get("NLGSCORE_DATA", ROOT.parent / "shared" / "data"))


def shell_env() -> dict:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "NLGSCORE_DATA": str(data_dir()),
    }


def remove_new(before: set) -> None:
    """What the page created at the repository root (its example outputs), removed."""
    for name in set(os.listdir(ROOT)) - before:
        path = ROOT / name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


@pytest.mark.parametrize("page", RUNNABLE, ids=page_id)
def test_page_runs_top_to_bottom(page, monkeypatch):
    text = page.read_text(encoding="utf-8")
    for needed in NEEDS_DATA.findall(text):
        if not (data_dir() / needed).exists():
            pytest.skip(f"{page_id(page)} needs {needed} in the human-judgment data folder (set NLGSCORE_DATA)")
    runs = [b for b in blocks(page) if b.runs]
    python = [b for b in runs if b.language == "python"]
    assert [c.strip() for c in grab_code_blocks(text, lang="python")] == [b.code.strip() for b in python]
    for name, value in shell_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "__main__"}
    before = set(os.listdir(ROOT))
    try:
        for block in runs:
            if block.language == "python":
                exec(compile(block.code, block.where, "exec"), namespace)
                continue
            done = subprocess.run(
                ["bash", "-e", "-c", commands(block)],
                cwd=ROOT,
                env=shell_env(),
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"{block.where} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    finally:
        remove_new(before)


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_every_block_has_a_known_language(page):
    for block in blocks(page):
        assert block.language in LANGUAGES, (
            f"{block.where}: fence it as one of {', '.join(LANGUAGES)}, not {block.language!r}"
        )
        assert set(block.flags) <= {"notest"}, f"{block.where}: unknown fence flags {block.flags}"


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_a_block_left_out_says_why(page):
    for block in blocks(page):
        if "notest" in block.flags:
            reason = " ".join(block.before.split())
            assert re.search(r"\b(not run|do not run)\b", reason) and re.search(r"\b(because|since)\b", reason), (
                f"{block.where}: the paragraph before a notest block must say why it is not run "
                f"(…not run… because/since …), got {reason[-200:]!r}"
            )


def test_the_block_reader_sees_what_mktestdocs_sees():
    """The fence pattern and mktestdocs agree on the python blocks of every page (a fence one of them
    misread would run or skip the wrong code)."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        ours = [b.code.strip() for b in blocks(page) if b.language == "python" and not b.flags]
        assert [c.strip() for c in grab_code_blocks(text, lang="python")] == ours, page_id(page)
