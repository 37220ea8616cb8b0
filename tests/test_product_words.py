"""Comments, docstrings, tests and messages give the reason, never the episode: no internal issue
numbers ("issue 31", "(#27)", "issue 11 #2"). Citations of other projects' issues and pull requests
stay: they are prior art ("bert_score #205", "PyTorch PR #164502", "vLLM issue #1234")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("nlgscore", "tests", "scripts", "metrics", "hub_cards", "examples", "benchmarks")
SUFFIXES = {".py", ".md", ".sh", ".txt", ".cfg", ".toml", ".yaml", ".yml"}
SKIPPED = ("benchmarks/gpu/reports/", "tests/golden/")  # measured data, copied reference files

# another project's issue or pull request, cited as prior art
PROJECTS = (
    r"bert_score|bert-score|PyTorch|pytorch|vLLM|vllm|transformers|tokenizers|sglang(?:-omni)?|TEI|trl|verl|MLX|"
    r"Ray|datasets|evaluate|accelerate|lighteval|mbrs|sacreBLEU|sacrebleu|uvicorn|starlette|fastapi|numpy|scipy"
)
CITATION = re.compile(
    rf"\b(?:{PROJECTS})(?:'s)? (?:(?:issues?|PRs?|pull requests?) )?#\d+(?:(?:,| and) #\d+)*"
    r"|\bPRs? #\d+(?:(?:,| and) #\d+)*"
)
# the project's own issue numbers: "issue 31", "Issue #6", "issues 27", "(#27)", "11 #2"
INTERNAL = re.compile(r"\b[Ii]ssues? ?#?\d+|\(#\d+\)|\b\d+ #\d+\b")


def internal_numbers(line: str) -> List[str]:
    """The internal issue numbers ``line`` names, after removing citations of other projects.

    >>> internal_numbers("padding cost 8% (issue #6 benchmark)"), internal_numbers("fails on 1e30 (bert_score #205)")
    (['issue #6'], [])
    """
    return INTERNAL.findall(CITATION.sub("", line))


@pytest.mark.parametrize(
    "line, found",
    [
        ("the fix of issue 31 holds", ["issue 31"]),
        ('"""Issue 11 #2: a plain-string reference"""', ["Issue 11"]),
        ("def test_bom(files):  # 11 #7", ["11 #7"]),
        ("a layout change (#27) removed it", ["(#27)"]),
        ("the issues 27 and 30 both", ["issues 27"]),
        ("the Rust tokenizer overflows (bert_score #205)", []),
        ("bert_score issues #164, #81 changed defaults", []),
        ("0.218 ms against 0.432 ms (PyTorch PR #164502); sglang-omni PRs #1369 and #1628", []),
        ("a cuDNN default (PyTorch issue #187770)", []),
        ("vLLM issue #1234 describes it", []),
    ],
)
def test_the_pattern_tells_internal_numbers_from_citations(line, found):
    assert internal_numbers(line) == found


def _files() -> List[Path]:
    files = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            relative = path.relative_to(ROOT).as_posix()
            if (
                path.is_file()
                and path.suffix in SUFFIXES
                and not relative.startswith(SKIPPED)
                and "__pycache__" not in relative
            ):
                files.append(path)
    return files


def test_no_internal_issue_number_in_code_tests_or_scripts():
    this = Path(__file__).resolve()
    found = []
    for path in _files():
        if path.resolve() == this:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if internal_numbers(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "give the reason, not the issue number:\n" + "\n".join(found)
