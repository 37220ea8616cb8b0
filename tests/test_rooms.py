"""The maps of the tree are made from the tree: every room and module says what it holds in its
docstring's first line, CONTRIBUTING.md's folder tree is the one those lines make, and ``tests/``
mirrors the package's rooms."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(ROOT / "scripts"))
import contributing_tree  # noqa: E402  (scripts/ is a folder of scripts, not a package)

sys.path.remove(str(ROOT / "scripts"))

# Test folders that name no room of the package, each with why it stands apart. Every other folder
# under tests/ is named after the room it tests (tests/meta/ holds the tests of nlgscore/meta/).
NOT_ROOMS = {
    "api": "the public surface across every face: the __all__ snapshot, the old import paths, the version",
    "docs": "the README and the documentation pages: their code blocks and their statements",
    "scripts": "the helper scripts the tests launch (under torchrun, as Hub clients) and scripts/'s tests",
    "golden": "reference values and tiny checkpoints, no tests",
}


def test_every_room_and_module_has_a_docstring_first_line():
    """The first line is what the tree shows: a room without an ``__init__.py`` docstring (or
    without an ``__init__.py``) or a module without a docstring would be a blank in the map."""
    rooms = [room / "__init__.py" for room in contributing_tree.rooms()]
    blank = [
        str(path.relative_to(ROOT))
        for path in rooms + contributing_tree.modules()
        if not contributing_tree.first_line(path)
    ]
    assert not blank, f"give these a docstring whose first line says what they hold: {blank}"


def test_contributing_holds_the_tree_the_code_makes():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert contributing_tree.updated(text) == text, "run: python scripts/contributing_tree.py --write"
    made = contributing_tree.tree()
    # every module on disk is in it, by its own line (not a hand-kept list)
    assert "    scorer.py" in made and "  registry.py " in made and "    outputs/" in made


def test_the_tree_follows_a_module_that_moves(tmp_path, monkeypatch):
    """The generator reads whatever is on disk: a module moved into a new room shows there, with
    its own first line, and the room's ``__init__`` line heads it."""
    package = tmp_path / "nlgscore"
    (package / "serve" / "http").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package."""\n')
    (package / "serve" / "__init__.py").write_text('"""Serving."""\n')
    (package / "serve" / "http" / "__init__.py").write_text('"""The HTTP room."""\n')
    (package / "serve" / "http" / "app.py").write_text('"""The app: one scorer, many callers, and the\nrest."""\n')
    monkeypatch.setattr(contributing_tree, "PACKAGE", package)
    monkeypatch.setattr(contributing_tree, "OTHER_FOLDERS", ())
    lines = contributing_tree.tree().splitlines()[2:-2]
    assert [line.split(None, 1) for line in lines] == [
        ["nlgscore/", "The package."],
        ["serve/", "Serving."],
        ["http/", "The HTTP room."],
        ["app.py", "The app: one scorer, many callers, and the …"],
    ]


def test_a_stale_tree_is_found_and_rewritten(tmp_path, monkeypatch):
    page = tmp_path / "CONTRIBUTING.md"
    page.write_text(f"# x\n{contributing_tree.BEGIN}\n```\nnlgscore/ old\n```\n{contributing_tree.END}\nafter\n")
    monkeypatch.setattr(contributing_tree, "CONTRIBUTING", page)
    monkeypatch.setattr(contributing_tree, "ROOT", tmp_path)
    assert contributing_tree.main(["--check"]) == 1
    assert contributing_tree.main(["--write"]) == 0 and contributing_tree.main(["--check"]) == 0
    assert page.read_text().endswith(f"{contributing_tree.END}\nafter\n")


def test_each_test_folder_names_a_room():
    """tests/<room>/ holds the tests of nlgscore/<room>/; the root keeps the cross-cutting tests
    (the contract over every metric, the entry points, the docs' and the wheel's checks) and the
    helpers the folders share (conftest.py, ties.py, long_texts.py ...)."""
    rooms = {room.name for room in contributing_tree.rooms() if room.parent == contributing_tree.PACKAGE}
    folders = [p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".")]
    strays = sorted(name for name in folders if name not in rooms and name not in NOT_ROOMS)
    assert not strays, (
        f"test folders that name no room of nlgscore/ (move their tests, or say why in NOT_ROOMS): {strays}"
    )
    assert not [name for name in NOT_ROOMS if name in rooms], "a room's own folder needs no exemption"
    assert {"serve", "meta", "bertscore"} <= rooms  # the rooms are read from nlgscore/, not an empty list


def test_test_file_names_are_unique():
    """The test folders are not packages (pytest imports each file by its name, the folder put on
    sys.path), so two test files of one name in two folders could not both be collected."""
    names = [p.name for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts]
    assert sorted({n for n in names if names.count(n) > 1}) == []
