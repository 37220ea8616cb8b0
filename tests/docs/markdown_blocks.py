"""The fenced code blocks of the documentation pages (README.md and docs/**/*.md), in order.

A block's info string is its language and, optionally, ``notest`` (not run; the paragraph before
it says why). ``python`` blocks are taken with mktestdocs (see test_code_blocks.py), the others
with the fence pattern below; both read the same fences, which test_code_blocks checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def pages() -> list[Path]:
    """README.md and every Markdown page of the site's sources (the mkdocs hooks excluded)."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)]


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and flags, its code and the text before it."""

    page: Path
    line: int
    language: str
    flags: tuple
    code: str
    before: str

    @property
    def where(self) -> str:
        return f"{page_id(self.page)}:{self.line}"

    @property
    def runs(self) -> bool:
        return "notest" not in self.flags and self.language in ("python", "bash", "console")


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the paragraph before it (HTML comments dropped)."""
    text = path.read_text(encoding="utf-8")
    found, end = [], 0
    for match in FENCE.finditer(text):
        info = match.group("info").split()
        before = HTML_COMMENT.sub("", text[end : match.start()]).strip()
        paragraph = before.split("\n\n")[-1].strip() if before else ""
        code = "\n".join(line[len(match.group("indent")) :] for line in match.group("code").splitlines())
        found.append(
            Block(
                path,
                text.count("\n", 0, match.start()) + 1,
                info[0] if info else "",
                tuple(info[1:]),
                code + "\n",
                paragraph,
            )
        )
        end = match.end()
    return found


def commands(block: Block) -> str:
    """The shell lines a ``bash`` or ``console`` block runs: a console block's ``$ `` lines only."""
    if block.language == "console":
        return "\n".join(line[2:] for line in block.code.splitlines() if line.startswith("$ ")) + "\n"
    return block.code
