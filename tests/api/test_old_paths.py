"""Every public module path that moved (CHANGELOG.md's Deprecated section) still imports, warns
once with a FutureWarning naming the new path, and gives the very module of the new path; package
code never imports an old path, and an internal module's old path is not kept."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nlgscore import _deprecated

PACKAGE = Path(__file__).resolve().parents[2] / "nlgscore"
# submodule paths under a moved public package: a row covers its submodules too
SUBMODULES = (
    "nlgscore.runs.mbr.decode",
    "nlgscore.runs.stream.readers",
    "nlgscore.runs.stream.row_windows",
)
CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"

# Run in a fresh interpreter: each old path imported twice, the warnings of each import recorded.
PROBE = r"""
import importlib, json, sys, warnings
import nlgscore
from nlgscore import _deprecated
out = {}
for old in sys.argv[1:]:
    seen = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(f"import {old}")  # an import statement, as a user's program has it
            module = sys.modules[old]
        seen.append([(w.category.__name__, str(w.message), w.filename) for w in caught if "nlgscore" in str(w.message)])
    row = _deprecated._row(old)
    new, _ = _deprecated.MOVED[row]
    same = module is importlib.import_module(new + old[len(row):])
    out[old] = {"first": seen[0], "second": seen[1], "same": same, "new": new}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probed():
    paths = [old for old in _deprecated.MOVED] + list(SUBMODULES)
    run = subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("old", list(_deprecated.MOVED))
def test_an_old_path_imports_warns_once_and_is_the_new_module(probed, old):
    got = probed[old]
    assert {w[0] for w in got["first"]} == {"FutureWarning"}, got["first"]
    # this row's warning, once (an old path inside another old package warns for that one too)
    [message] = [w[1] for w in got["first"] if w[1].startswith(old + " is deprecated")]
    assert got["new"] in message, message
    assert got["second"] == []  # once per process
    assert got["same"]


def test_the_warning_points_at_the_importing_line(probed):
    assert probed["nlgscore.runs.mbr"]["first"][0][2] == "<string>"  # the probe's own code, not importlib's


@pytest.mark.parametrize("old", SUBMODULES)
def test_an_old_submodule_path_is_the_new_submodule(probed, old):
    assert probed[old]["same"]
    assert probed[old]["second"] == []


def test_the_stream_recipe_works_at_both_paths():
    code = (
        "import warnings; warnings.simplefilter('ignore', FutureWarning)\n"
        "from nlgscore.runs.stream import dataset, score_stream, score_to_file, table_file, text_files\n"
        "import nlgscore.stream as new\n"
        "assert (dataset, score_stream, score_to_file, table_file, text_files) == "
        "(new.dataset, new.score_stream, new.score_to_file, new.table_file, new.text_files)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_each_kept_path_is_one_the_changelog_names_as_deprecated():
    """Only public paths keep a shim: each row is named in the CHANGELOG's Deprecated section, and
    an internal module's old path (never published) no longer imports."""
    text = CHANGELOG.read_text(encoding="utf-8")
    start = text.index("### Deprecated")
    section = text[start : text.index("\n### ", start + 1)]
    assert [old for old in _deprecated.MOVED if f"`{old}`" not in section] == []
    code = "import nlgscore\ntry:\n    import nlgscore.core.gemm\nexcept ModuleNotFoundError:\n    print('gone')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "gone"


def _module_names():
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_of_the_package_is_covered_by_an_old_path():
    """The finder sits in front of the file finder: a row naming a live module would hide it."""
    live = set(_module_names()) | {"nlgscore.baselines", "nlgscore.evaluate_modules"}
    assert not [name for name in live if _deprecated._row(name) or name in _deprecated.OLD_PACKAGES]
    assert _deprecated._row("nlgscore.runs.mbr.decode") == "nlgscore.runs.mbr"  # the detector finds one


def _old_imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        for name in names:
            if (
                _deprecated._row(name)
                or name in _deprecated.OLD_PACKAGES
                or name.startswith(tuple(p + "." for p in _deprecated.OLD_PACKAGES))
            ):
                yield name


def test_package_code_imports_no_old_path():
    # nlgscore/bench is the benchmark harness, leaving the package for benchmarks/
    found = {
        str(p.relative_to(PACKAGE)): sorted(set(_old_imports(p)))
        for p in PACKAGE.rglob("*.py")
        if "bench" not in p.parts
    }
    assert not {k: v for k, v in found.items() if v}


def test_importing_every_module_raises_no_old_path_warning():
    """Every module of the package imported with the package's own FutureWarnings as errors
    (modules whose optional dependency is not installed are skipped)."""
    code = r"""
import importlib, sys, warnings
warnings.filterwarnings("error", message=r"nlgscore\.", category=FutureWarning)
skipped = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:  # an optional extra (ray, inspect-ai, ...) missing here
        skipped.append(name)
print(skipped)
"""
    names = sorted(n for n in _module_names() if not n.startswith(("nlgscore.bench", "nlgscore.__main__")))
    run = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
