"""Every name a public face declares in ``__all__`` imports, and the faces say what they are."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from faces import FACES, INTERNAL_ROOMS

from nlgscore import registry

PACKAGE = Path(__file__).resolve().parents[2] / "nlgscore"


@pytest.mark.parametrize("face", FACES)
def test_every_name_in_all_imports(face):
    module = importlib.import_module(face)
    assert module.__all__ == list(dict.fromkeys(module.__all__)), f"{face}.__all__ repeats a name"
    missing = []
    for name in module.__all__:
        try:
            getattr(module, name)
        except (AttributeError, ImportError) as err:
            missing.append(f"{name}: {err!r}")
    assert not missing, f"{face} declares names that do not import: {missing}"


@pytest.mark.parametrize("face", FACES)
def test_each_face_has_a_runnable_example(face):
    doc = importlib.import_module(face).__doc__ or ""
    assert ">>> " in doc, f"{face}'s docstring has no >>> example"


def test_the_package_face_has_every_scorer_class_and_error_class():
    import nlgscore
    from nlgscore.errors import NlgscoreError

    classes = {registry.metric(name).scorer.rpartition(":")[2] for name in registry.metric_names(builtin=True)}
    assert classes <= set(nlgscore.__all__)
    assert {"NlgscoreError", "ArgumentError", "ArgumentTypeError", "DataError"} <= set(nlgscore.__all__)
    # every error class the package defines (outside the CLI's own) is a name of the face
    defined = set()
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and node.name.endswith(("Error", "Cancelled"))
            ):
                defined.add(node.name)
    # serve's internal answers of a refused request (a 400 naming the field), never raised to a caller
    defined -= {"HTTPError", "FieldError"}
    assert defined <= set(nlgscore.__all__), sorted(defined - set(nlgscore.__all__))
    for name in defined - {"NonFiniteScoreError"}:
        assert issubclass(getattr(nlgscore, name), NlgscoreError), name


def test_importing_the_package_imports_no_torch():
    code = "import sys, nlgscore; print(sorted(m for m in ('torch', 'transformers', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("room", INTERNAL_ROOMS)
def test_internal_rooms_say_so(room):
    doc = ast.get_docstring(ast.parse((PACKAGE / room / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert doc.startswith("Internal"), f"nlgscore/{room}/__init__.py must say the room is internal"
