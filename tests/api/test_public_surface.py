"""The public surface (every face's names, with the signatures of its callables) is snapshotted
in ``public_surface.txt``: a change to it fails here with a diff, so it is made on purpose.

Regenerate it after an intended change (and say so in CHANGELOG.md):

    python tests/api/test_public_surface.py --write
"""

import difflib
import importlib
import inspect
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the faces list beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from faces import FACES

SNAPSHOT = Path(__file__).resolve().parent / "public_surface.txt"


def _signature(value: object) -> str:
    try:
        text = str(inspect.signature(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # a default's repr names its address


def _describe(face: str, name: str, value: object) -> list:
    where = f"{face}.{name}"
    if inspect.ismodule(value):
        return [f"{where}: module"]
    if inspect.isclass(value) and issubclass(value, BaseException):  # an error class: what `except` matches it by
        return [f"{where}: error({', '.join(base.__name__ for base in value.__bases__)})"]
    if inspect.isclass(value):
        lines = [f"{where}: class{_signature(value)}"]
        for attr, member in sorted(vars(value).items()):
            if attr.startswith("_"):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if inspect.isfunction(member):
                lines.append(f"{where}.{attr}{_signature(member)}")
            elif isinstance(member, property):
                lines.append(f"{where}.{attr}: property")
        return lines
    if callable(value):
        return [f"{where}{_signature(value)}"]
    return [f"{where}: {type(value).__name__}"]


def surface() -> str:
    lines = []
    for face in FACES:
        module = importlib.import_module(face)
        for name in sorted(module.__all__):
            lines.extend(_describe(face, name, getattr(module, name)))
    return "\n".join(lines) + "\n"


def test_public_surface_matches_the_snapshot():
    now, kept = surface(), SNAPSHOT.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(kept.splitlines(True), now.splitlines(True), "public_surface.txt", "now"))
    assert not diff, f"the public API changed; if on purpose: python tests/api/test_public_surface.py --write\n{diff}"


def test_the_snapshot_holds_every_face():
    kept = SNAPSHOT.read_text(encoding="utf-8")
    assert all(f"{face}." in kept for face in FACES)
    assert "nlgscore.load(spec: 'str', **options: 'Any')" in kept


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/api/test_public_surface.py --write")
    SNAPSHOT.write_text(surface(), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
