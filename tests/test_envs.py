"""One configuration path: every ``NLGSCORE_*`` variable is a row of ``nlgscore.envs``, and no
other module of the package reads or writes one.

The scan reads the source with ``ast`` and flags any look-up of an ``NLGSCORE_*`` name in a
mapping (``os.environ[...]``, ``.get``/``.pop``/``.setdefault``, ``in``) or through
``os.getenv``/``putenv``/``unsetenv``, whether the name is a literal (an f-string or a sum
starting with one too) or a module constant holding one (``ENV_SWITCH = "NLGSCORE_ONEDNN"``,
``ENV = envs.THREADS.name``, imported under any alias). It is strict: nothing is skipped.
:data:`NOT_YET` names the modules known to read a variable still, printed with a failure, so a
failure says which readers are awaited and which are new; an entry that reads none any more
fails too (empty it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

from nlgscore import envs
from nlgscore.errors import ArgumentError

PACKAGE = Path(__file__).resolve().parent.parent / "nlgscore"
CONFIGURATION = PACKAGE / "envs.py"
# Readers known to read a variable still (none: every reader goes through nlgscore.envs).
NOT_YET: Tuple[str, ...] = ()
ACCESSORS = ("get", "pop", "setdefault")
OS_FUNCTIONS = ("getenv", "putenv", "unsetenv")


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _row_name(node: ast.AST) -> Optional[str]:
    """``envs.ROW.name`` (or ``nlgscore.envs.ROW.name``) as the variable's name."""
    if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Attribute):
        row = getattr(envs, node.value.attr, None)
        base = ast.unparse(node.value.value)
        if isinstance(row, envs.Variable) and base.split(".")[-1] == "envs":
            return row.name
    return None


def _literal(node: ast.AST) -> Optional[str]:
    """An ``NLGSCORE_`` name (or its prefix) written in ``node`` itself."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("NLGSCORE_"):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _literal(node.values[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left)
    return _row_name(node)


class Package:
    """The package's sources, their module-level ``NLGSCORE_`` constants and their import aliases."""

    def __init__(self, sources: Dict[str, Path]) -> None:
        self.trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in sources.items()}
        self.paths = sources
        self.constants: Dict[str, Dict[str, str]] = {name: {} for name in sources}
        self.modules: Dict[str, Dict[str, str]] = {name: {} for name in sources}  # alias -> module
        imported: Dict[str, List[Tuple[str, str, str]]] = {name: [] for name in sources}  # (alias, module, name)
        for name, tree in self.trees.items():
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        pairs = (
                            zip(target.elts, node.value.elts)
                            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                            else [(target, node.value)]
                        )
                        for left, right in pairs:
                            value = _literal(right)
                            if isinstance(left, ast.Name) and value:
                                self.constants[name][left.id] = value
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nlgscore"):
                    for alias in node.names:
                        imported[name].append((alias.asname or alias.name, node.module, alias.name))
                        self.modules[name][alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.startswith("nlgscore"):
                            self.modules[name][alias.asname or alias.name.split(".")[0]] = (
                                alias.name if alias.asname else alias.name.split(".")[0]
                            )
        changed = True
        while changed:  # constants imported from another module, under any alias, to a fixed point
            changed = False
            for name, entries in imported.items():
                for alias, module, original in entries:
                    value = self.constants.get(module, {}).get(original)
                    if value and self.constants[name].get(alias) != value:
                        self.constants[name][alias] = value
                        changed = True

    def key(self, module: str, node: ast.AST) -> Optional[str]:
        """The ``NLGSCORE_`` name ``node`` stands for in ``module``, or None."""
        value = _literal(node)
        if value:
            return value
        if isinstance(node, ast.Name):
            return self.constants[module].get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = self.modules[module].get(node.value.id)
            return self.constants.get(target or "", {}).get(node.attr)
        return None

    def reads(self, module: str) -> List[str]:
        """``line: expression`` of every look-up of an ``NLGSCORE_`` variable in ``module``."""
        found: List[Tuple[int, str]] = []
        for node in ast.walk(self.trees[module]):
            keys: List[ast.AST] = []
            if isinstance(node, ast.Subscript):
                keys = [node.slice]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                if node.func.attr in ACCESSORS or node.func.attr in OS_FUNCTIONS:
                    keys = [node.args[0]]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
                if node.func.id in OS_FUNCTIONS:
                    keys = [node.args[0]]
            elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                keys = [node.left]
            for key in keys:
                name = self.key(module, key)
                if name:
                    found.append((node.lineno, f"{node.lineno}: {ast.unparse(node)} ({name})"))
        return [text for _, text in sorted(found)]


def _sources(root: Path = PACKAGE) -> Dict[str, Path]:
    return {_module(path): path for path in root.rglob("*.py")}


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def offenders() -> Dict[str, List[str]]:
    """The modules other than :mod:`nlgscore.envs` that read an ``NLGSCORE_`` variable, with the reads."""
    sources = _sources()
    package = Package(sources)
    return {
        _relative(path): package.reads(name)
        for name, path in sorted(sources.items())
        if path != CONFIGURATION and package.reads(name)
    }


def test_no_module_but_envs_reads_an_nlgscore_variable():
    found = offenders()
    awaited = {path: reads for path, reads in found.items() if path in NOT_YET}
    new = {path: reads for path, reads in found.items() if path not in NOT_YET}
    report = "\n".join(f"{path}:\n    " + "\n    ".join(reads) for path, reads in found.items())
    print(f"NOT_YET (readers awaited, to be switched to nlgscore.envs): {', '.join(NOT_YET) or 'none'}")
    assert not found, (
        f"modules reading NLGSCORE_* variables outside nlgscore/envs.py (read them through its rows):\n{report}\n"
        f"of which NOT_YET, awaited: {sorted(awaited) or 'none'}; new: {sorted(new) or 'none'}"
    )


def test_not_yet_names_only_modules_that_still_read_one():
    found = offenders()
    stale = [path for path in NOT_YET if path not in found]
    assert not stale, f"these no longer read an NLGSCORE_* variable: remove them from NOT_YET: {stale}"


def test_the_scan_sees_every_spelling(tmp_path):
    room = tmp_path / "nlgscore" / "room"
    room.mkdir(parents=True)
    (room / "__init__.py").write_text("")
    (room / "names.py").write_text('SWITCH = "NLGSCORE_ONE"\nROW = envs.THREADS.name\n')
    (room / "reader.py").write_text(
        "import os\nfrom os import getenv\nfrom nlgscore import envs\n"
        "from nlgscore.room import names\nfrom nlgscore.room.names import SWITCH as S, ROW\n"
        "A, B = 'NLGSCORE_A', 'x'\n"
        "def f(environ):\n"
        "    os.environ.get('NLGSCORE_LITERAL')\n"
        "    os.environ[S] = '1'\n"
        "    ROW in os.environ\n"
        "    environ.pop(names.SWITCH, None)\n"
        "    getenv(A)\n"
        "    os.environ.get(f'NLGSCORE_{B}')\n"
        "    os.environ.get('HOME'), os.environ.get(B), envs.THREADS.get()\n"
    )
    package = Package({f"nlgscore.room.{path.stem}": path for path in room.glob("[!_]*.py")})
    reads = package.reads("nlgscore.room.reader")
    assert [line.rsplit("(", 1)[-1].rstrip(")") for line in reads] == [
        "NLGSCORE_LITERAL",
        "NLGSCORE_ONE",
        "NLGSCORE_THREADS",
        "NLGSCORE_ONE",
        "NLGSCORE_A",
        "NLGSCORE_",
    ], reads
    assert package.reads("nlgscore.room.names") == []


def test_every_variable_the_package_names_is_a_row():
    """A variable the code or its docstrings name has a row (so the documentation's list, made
    from the rows, is complete), and every row is named somewhere outside the module."""
    named: Set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path != CONFIGURATION:
            named |= set(re.findall(r"NLGSCORE_[A-Z][A-Z_]*[A-Z]", path.read_text(encoding="utf-8")))
    rows = {row.name for row in envs.VARIABLES}
    assert named - rows == set(), f"give these a row in nlgscore/envs.py: {sorted(named - rows)}"
    assert rows - named == set(), f"rows no module uses: {sorted(rows - named)}"
    assert len(rows) == len(envs.VARIABLES)


@pytest.mark.parametrize("row", envs.VARIABLES, ids=lambda row: row.name)
def test_each_row_is_complete(row):
    assert row.kind in envs.KINDS and row.doc and "\n" not in row.doc and row.default_text
    assert envs.variable(row.name) is row
    if row.option:
        assert row.changes_numbers  # an option that moves no number needs no signature field


def test_values_are_read_at_each_call(monkeypatch):
    monkeypatch.delenv("NLGSCORE_TOKEN_FORWARD", raising=False)
    assert envs.TOKEN_FORWARD.get() is False and not envs.TOKEN_FORWARD.is_set()
    monkeypatch.setenv("NLGSCORE_TOKEN_FORWARD", " ON ")
    assert envs.TOKEN_FORWARD.get() is True and envs.TOKEN_FORWARD.is_set()
    monkeypatch.setenv("NLGSCORE_TOKEN_FORWARD", "")
    assert envs.TOKEN_FORWARD.get() is False  # empty: the default
    monkeypatch.setenv("NLGSCORE_DATA", "~/judgments")
    assert envs.DATA.get() == Path("~/judgments").expanduser()
    monkeypatch.setenv("NLGSCORE_SPEC", " bertscore:minilm ")
    assert envs.SPEC.get() == "bertscore:minilm"
    monkeypatch.delenv("NLGSCORE_ONEDNN", raising=False)
    assert envs.ONEDNN.get() is None  # unset: the CPU's rule


@pytest.mark.parametrize(
    "row,text,message",
    [
        (envs.ONEDNN, "fast", r"NLGSCORE_ONEDNN='fast' is not a value it takes: 1, true, yes, on \(on\) or 0"),
        (envs.CUDA_GRAPHS, "2", r"NLGSCORE_CUDA_GRAPHS='2' is not a value it takes"),
        (envs.THREADS, "0", r"NLGSCORE_THREADS must be a positive integer, got '0'"),
        (envs.THREADS, "two", r"NLGSCORE_THREADS must be a positive integer, got 'two'"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_variable(row, text, message):
    with pytest.raises(ArgumentError, match=message):
        row.get({row.name: text})
    with pytest.raises(ArgumentError, match=message):
        row.set(text, {})  # nothing unreadable is handed to another process either


def test_set_and_unset_write_what_get_reads():
    environ: Dict[str, str] = {}
    envs.ONEDNN.set(False, environ)
    assert environ == {"NLGSCORE_ONEDNN": "0"} and envs.ONEDNN.get(environ) is False
    envs.ONEDNN.unset(environ)
    assert environ == {} and envs.ONEDNN.get(environ) is None
    with pytest.raises(ArgumentError, match="not an nlgscore environment variable"):
        envs.variable("NLGSCORE_NOPE")


def test_the_readers_read_through_the_rows(monkeypatch, tmp_path):
    """The modules that had their own reads give the rows' answers (and the rows' errors)."""
    from nlgscore.backend import cuda_kernels, gemm, graph_buckets, hub, kernel_cache, packed_attention
    from nlgscore.cli.meta import default_cache
    from nlgscore.meta.data.loaders import default_data_dir

    monkeypatch.setenv("NLGSCORE_CACHE", str(tmp_path))
    monkeypatch.setenv("NLGSCORE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("NLGSCORE_KERNEL_CACHE", raising=False)
    assert kernel_cache.cache_folder() == tmp_path / "kernels" and default_cache() == tmp_path / "meta-scores"
    assert default_data_dir() == tmp_path / "data"
    monkeypatch.setenv("NLGSCORE_KERNEL_CACHE", "off")
    assert kernel_cache.cache_folder() is None
    for value, graphs, cudnn, tokens in (("1", True, True, True), ("no", False, False, False)):
        for name in ("NLGSCORE_CUDA_GRAPHS", "NLGSCORE_CUDNN_ATTENTION", "NLGSCORE_TOKEN_FORWARD"):
            monkeypatch.setenv(name, value)
        assert (graph_buckets.enabled(), cuda_kernels.cudnn_allowed(), packed_attention.enabled()) == (
            graphs,
            cudnn,
            tokens,
        )
        assert packed_attention.wants_tokens("auto") is tokens and packed_attention.wants_tokens("tokens")
    monkeypatch.setenv("NLGSCORE_BASELINE_REPO", "me/baselines@v1")
    assert hub.configured_baseline_repo() == ("me/baselines", "v1")
    monkeypatch.setenv("NLGSCORE_ONEDNN", "sometimes")
    with pytest.raises(ArgumentError, match="NLGSCORE_ONEDNN"):
        gemm.choose_kernel([(4, 4)])
