"""CONTRIBUTING.md's folder tree, made from the code: ``python scripts/contributing_tree.py --write``.

The tree lists every room (package folder) and module of ``nlgscore/``, each with the first line
of its docstring (a room's is its ``__init__.py``'s), and the checkout's other code folders
(``metrics/``, ``benchmarks/``) by theirs. It reads whatever is on disk, with ``ast`` only (nothing
is imported), so a module that is added, moved or renamed changes the tree at the next
``--write``; a first line that goes on in the docstring's next line ends with `` …``. The tree
sits between two markers and is written by this script, never by hand; tests/test_rooms.py checks
that the committed tree is the one the code makes now.

usage:
    python scripts/contributing_tree.py --check    # exit 1 when CONTRIBUTING.md's tree is stale
    python scripts/contributing_tree.py --write    # rewrite the tree in place
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "nlgscore"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
# the checkout's other code folders, each shown by its own __init__ docstring, not descended into
OTHER_FOLDERS = ("metrics", "benchmarks")

BEGIN = "<!-- tree: made from the folders and docstrings by scripts/contributing_tree.py; edit the docstrings -->"
END = "<!-- tree: end -->"
BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
# a Sphinx role (:class:`~a.b.C`, :meth:`text <target>`, :mod:`a.b`): its text, or the last name after ~
ROLE = re.compile(r":[a-z]+:`(~?)([^`<]+?)(?:\s*<[^>]+>)?`")


def docstring(path: Path) -> Optional[str]:
    """The module docstring of ``path``, or None when it has none."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))


def first_line(path: Path) -> str:
    """The first line of ``path``'s docstring as the tree shows it ("" when there is none).

    >>> first_line(PACKAGE / "errors.py")
    "The package's user-error classes: what the command line reports in one line, exit 2."
    >>> first_line(PACKAGE / "version.py").endswith(" …")  # its sentence goes on in the next line
    True
    """
    doc = docstring(path) if path.is_file() else None
    lines = (doc or "").strip().splitlines()
    if not lines or not lines[0].strip():
        return ""
    line = ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), lines[0].strip())
    line = line.replace("``", "`")
    goes_on = len(lines) > 1 and lines[1].strip() and not line.endswith((".", "?", "!"))
    return line + " …" if goes_on else line


def holds_code(folder: Path) -> bool:
    return folder.name != "__pycache__" and any(p.suffix == ".py" for p in folder.rglob("*.py"))


def rooms(package: Path = PACKAGE) -> List[Path]:
    """Every package folder under ``package`` (itself included) that holds Python modules."""
    return [package] + sorted(p for p in package.rglob("*") if p.is_dir() and holds_code(p))


def modules(package: Path = PACKAGE) -> List[Path]:
    """Every module of ``package`` other than the ``__init__.py`` files (a room speaks for those)."""
    return sorted(p for p in package.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts)


def _rows(folder: Path, depth: int) -> Iterator[Tuple[str, str]]:
    """(name as indented in the tree, first line) for ``folder``, its modules, then its rooms."""
    yield "  " * depth + folder.name + "/", first_line(folder / "__init__.py")
    for path in sorted(p for p in folder.glob("*.py") if p.name != "__init__.py"):
        yield "  " * (depth + 1) + path.name, first_line(path)
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and holds_code(p)):
        yield from _rows(sub, depth + 1)


def tree() -> str:
    """The tree as CONTRIBUTING shows it, markers included."""
    rows = list(_rows(PACKAGE, 0))
    rows += [(name + "/", first_line(ROOT / name / "__init__.py")) for name in OTHER_FOLDERS]
    width = max(len(name) for name, _ in rows) + 2
    body = "\n".join(f"{name:<{width}}{line}".rstrip() for name, line in rows)
    return f"{BEGIN}\n```\n{body}\n```\n{END}"


def updated(text: str) -> str:
    """``text`` (CONTRIBUTING.md) with its tree replaced by the one the code makes now."""
    if len(BLOCK.findall(text)) != 1:
        raise SystemExit(f"CONTRIBUTING.md must hold the tree markers once: {BEGIN!r} ... {END!r}")
    return BLOCK.sub(lambda _: tree(), text)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when CONTRIBUTING.md's tree is stale")
    mode.add_argument("--write", action="store_true", help="rewrite CONTRIBUTING.md's tree")
    args = parser.parse_args(argv)
    text = CONTRIBUTING.read_text(encoding="utf-8")
    new = updated(text)
    if new == text:
        return 0
    if args.write:
        CONTRIBUTING.write_text(new, encoding="utf-8")
        print(f"rewrote the tree of {CONTRIBUTING.relative_to(ROOT)}")
        return 0
    print(f"stale: the tree of {CONTRIBUTING.relative_to(ROOT)} (run python scripts/contributing_tree.py --write)")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
