"""The evaluate modules (metrics/) and the Hub cards (hub_cards/: Space apps and the cards'
Python blocks) import only the public faces, never an internal room."""

import ast
import re
from pathlib import Path

import pytest
from faces import ALSO_PUBLIC, FACES

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python[^\n]*\n(.*?)```", re.S)


def _sources():
    for path in sorted([*REPO.glob("metrics/**/*.py"), *REPO.glob("hub_cards/**/*.py")]):
        yield str(path.relative_to(REPO)), path.read_text(encoding="utf-8")
    for path in sorted([*REPO.glob("metrics/*/README.md"), *REPO.glob("hub_cards/*/README.md")]):
        for n, block in enumerate(BLOCK.findall(path.read_text(encoding="utf-8"))):
            yield f"{path.relative_to(REPO)} block {n}", block


def imported(source: str):
    """Every nlgscore module an import statement (or a doctest line) of ``source`` names."""
    lines = source.splitlines()
    if any(line.strip().startswith(">>> ") for line in lines):  # a doctest: its code lines, not its output
        lines = [line.strip()[4:] for line in lines if line.strip().startswith((">>> ", "... "))]
    code = "\n".join(lines)
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def _public(module: str) -> bool:
    return (
        not module.startswith("nlgscore")
        or module in FACES
        or module.startswith(tuple(p + "." for p in ALSO_PUBLIC))
        or module in ALSO_PUBLIC
    )


SOURCES = dict(_sources())


@pytest.mark.parametrize("where", sorted(SOURCES))
def test_imports_only_public_faces(where):
    internal = [m for m in imported(SOURCES[where]) if not _public(m)]
    assert not internal, f"{where} imports internal modules {internal}: import from {', '.join(FACES)}"


def test_the_check_sees_an_internal_import():
    assert list(imported("from nlgscore.backend.tables import table")) == ["nlgscore.backend.tables"]
    assert list(imported(">>> import nlgscore.core.base\n[0.9]")) == ["nlgscore.core.base"]
    assert (
        not _public("nlgscore.backend.tables") and _public("nlgscore.extend") and _public("nlgscore.integrations.trl")
    )
    assert len(SOURCES) > 10  # the modules, the apps and the cards' blocks were found
