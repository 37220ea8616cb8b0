"""The folder tree is the architecture: imports flow one way, and no package module grows too big.

Layers, lowest first (a module may import its own layer's modules only inside its own folder,
and any lower layer):

    errors, version           the ground floor: the error types every room raises, the version
    envs                      the NLGSCORE_* environment variables every room reads (on errors alone)
    backend                   models and CPU plumbing (checkpoints, kernels, threads, batching)
    core                      the contract: the Scorer template, Call, Result, Signature, Runtime
    scheduler, corpus         the Call queue; corpus I/O (the resumable output files)
    bertscore, seq2seq        metric families (every package holding a registry row's scorer); none imports another
    remote                    the client of a running nlgscore serve (and the wire schema it shares)
    registry                  the metric table
    mbr, stream               MBR decoding and corpora larger than memory (above the table)
    meta, integrations        adapters over scores
    calibration               a backbone's layer and baseline (reads meta folders)
    cli                       argument parsing and printing

``nlgscore/__init__.py`` is the public façade (lazy names from any layer) and is not checked.
The test reads the source with ``ast``: lazy imports inside functions count too, since they are
the same dependency, only deferred, and so does a module named by string (``"nlgscore.x.y:Name"``,
as the registry's rows name their classes).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from nlgscore import registry

PACKAGE = Path(__file__).resolve().parent.parent / "nlgscore"
LAYERS = {
    "errors": -2,  # the error types: every room raises them
    "version": -2,  # what signatures and caches record
    # the NLGSCORE_* environment variables: every room reads its switches there; their bad values
    # are the ground floor's errors
    "envs": -1.5,
    "_deprecated": -2,  # old module paths -> new ones (the standard library only)
    "backend": -1,  # models, kernels, threads, batching: the plumbing the contract runs on
    "core": 0,
    "data": 0,
    # the Call queue behind Scorer.acompute (registered with core, never imported by it) and the
    # resumable output files: above the contract, below the metric table
    "scheduler": 0.5,
    "corpus": 0.5,
    "extend": 0.75,  # the face for metric authors: the contract and the plumbing it is written with
    "baselines": 0,
    # a metric family: the package of a built-in registry row's scorer ("nlgscore.<family>[.module]:Class")
    **{registry.metric(name).scorer.split(":")[0].split(".")[1]: 1 for name in registry.metric_names(builtin=True)},
    "specs": 1.5,  # the built-in metrics' spec parsers: below the table that names them
    "remote": 1.75,  # the client of a running server: below the table, which builds it for a URL
    "registry": 2,
    # MBR and corpora: above the table (mbr builds metrics by name), below the adapters and the CLI
    "mbr": 2.5,
    "stream": 2.5,
    "meta": 3,
    "integrations": 3,
    "serve": 3,
    # calibrating a backbone reads meta-evaluation folders and feeds the CLI: between the two
    "calibration": 3.5,
    "cli": 4,
}
STRING_IMPORT = re.compile(r"^nlgscore(\.\w+)+:\w+$")  # a module path by string, imported later
UNLISTED = -99  # not in LAYERS (test_every_subpackage_has_a_layer finds those)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> List[Tuple[str, bool]]:
    """(imported nlgscore module, at module level?) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    for node in tree.body:  # imports under `if TYPE_CHECKING:` or try/except at top level
        if isinstance(node, (ast.If, ast.Try)):
            top_level.update(id(child) for child in ast.walk(node))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from nlgscore import __version__` names the façade's attributes, not the façade
            names = ([] if module == "nlgscore" else [module]) + [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STRING_IMPORT.match(node.value):
            # "nlgscore.pkg.module:Name" (a registry row, a lazy table): imported when it is used
            names = [node.value.split(":")[0]]
            out.extend((name, False) for name in names)
            continue
        else:
            continue
        for name in names:
            if name == "nlgscore" or name.startswith("nlgscore."):
                out.append((name, id(node) in top_level))
    return out


def _layer(module: str) -> Tuple[str, int]:
    parts = module.split(".")
    if len(parts) < 2:
        return "", -1
    # a module row ("core.errors") beats its folder's row
    top = ".".join(parts[1:3]) if ".".join(parts[1:3]) in LAYERS else parts[1]
    return top, LAYERS.get(top, UNLISTED)


def _sources() -> Dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def test_every_subpackage_has_a_layer():
    tops = {_module_name(p).split(".")[1] for p in PACKAGE.rglob("*.py") if _module_name(p) != "nlgscore"}
    tops.discard("__main__")
    assert tops <= set(LAYERS), f"give these a layer in this test: {sorted(tops - set(LAYERS))}"


def test_imports_flow_from_adapters_to_core():
    modules = _sources()
    wrong = []
    for name, path in modules.items():
        if name in ("nlgscore", "nlgscore.__main__"):
            continue
        top, layer = _layer(name)
        for target, top_level in _imports(path):
            if _allowed_upward(name, target, top_level):
                continue
            if target == "nlgscore":
                if layer < LAYERS["registry"]:  # the façade reaches every layer
                    wrong.append(f"{name} imports the package façade `nlgscore`")
                continue
            target_top, target_layer = _layer(target)
            if target_top == top or target_layer == UNLISTED and target not in modules:
                continue
            if target_layer > layer or (target_layer == layer and target_top != top):
                wrong.append(f"{name} (layer {top}) imports {target} (layer {target_top})")
    assert not wrong, "imports against the flow:\n" + "\n".join(sorted(set(wrong)))


# Lazy imports against the flow, each with why it stays. Nothing else may be added.
# (Scorer.acompute's queue is made by a factory the scheduler registers: core never imports it.)
UPWARD_ALLOWED: Dict[Tuple[str, str], str] = {}


def _allowed_upward(name: str, target: str, top_level: bool) -> bool:
    return not top_level and any(name == n and (target == t or target.startswith(t + ".")) for n, t in UPWARD_ALLOWED)


def test_allowed_upward_imports_still_happen():
    sources = _sources()
    stale = [
        pair
        for pair in UPWARD_ALLOWED
        if not any(_allowed_upward(pair[0], target, top) for target, top in _imports(sources[pair[0]]))
    ]
    assert not stale, f"allowed upward imports that no longer happen (remove them from the list): {stale}"


@pytest.mark.parametrize(
    "room", ["core", "backend", "scheduler", "corpus", "corpus/outputs", "serve/http", "serve/workers", "remote"]
)
def test_each_room_says_what_it_holds(room):
    """The rooms by role: each ``__init__`` docstring names every module and folder it
    holds, so a new module is placed and described, not dropped in the nearest folder."""
    folder = PACKAGE / room
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    held = [
        p.name + ("/" if p.is_dir() else "")
        for p in folder.iterdir()
        if p.name not in ("__init__.py", "__pycache__") and (p.suffix == ".py" or p.is_dir())
    ]
    assert held and not [name for name in held if f"``{name}``" not in doc], (room, held)


def _cycle(graph: Dict[str, Set[str]]) -> List[str]:
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "lazy-imports-included"])
def test_no_import_cycle(lazy):
    """No cycle among module-level imports, nor once the imports inside functions count too (the
    gemm/runtime bf16 probe and signature's version once made one)."""
    modules = _sources()
    graph = {
        name: {
            target
            for target, top_level in _imports(path)
            if (top_level or lazy) and target in modules and target != name
        }
        for name, path in modules.items()
    }
    assert not _cycle(graph), " -> ".join(_cycle(graph))


def test_cycle_detector_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _capabilities() -> List[str]:
    """The capabilities a scorer class declares: the public, non-callable class attributes of the
    template (``Scorer`` and its run-time base) other than the metric's identity."""
    from nlgscore.core.base import Scorer
    from nlgscore.core.scorer_runtime import ScorerRuntime

    names = {
        n
        for cls in (Scorer, ScorerRuntime)
        for n, v in vars(cls).items()
        if not n.startswith("_") and not callable(v) and not isinstance(v, (property, staticmethod, classmethod))
    }
    return sorted(names - {"name", "needs", "multiref"})


def _readers(attribute: str, sources: Dict[str, Path]) -> List[str]:
    """Modules that read ``attribute`` of some object (``x.attribute`` loaded, or ``getattr(x, "attribute", ...)``)."""
    found = []
    for name, path in sources.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load):
                found.append(name)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == attribute
            ):
                found.append(name)
    return sorted(set(found))


def test_every_declared_capability_has_a_reader():
    """A capability no package code reads is a promise nothing keeps (``one_pass`` was one)."""
    capabilities = _capabilities()
    assert {
        "caches_embeddings",
        "pairs_from_embeddings",
        "call_dependent",
        "one_pass",
        "columns",
        "budget_family",
    } <= set(capabilities)
    sources = _sources()
    unread = [c for c in capabilities if not _readers(c, sources)]
    assert not unread, f"capabilities declared but read nowhere in the package: {unread}"
    assert _readers("no_such_capability", sources) == []  # the detector can come back empty


# Reads of another module's private attributes (``obj._name`` where no class or function of the
# reading module defines ``_name``), each with why it stays. Nothing else may be added.
PRIVATE_READS_ALLOWED = {
    # torch's own op namespace: the fused oneDNN linear has no public name (torch, not this package)
    ("nlgscore.backend.gemm", "torch.ops.mkldnn._linear_pointwise"): "torch's private op, no public API",
    ("nlgscore.backend.gemm", "torch.ops.mkldnn._is_mkldnn_bf16_supported"): "torch's private op, no public API",
    # oneDNN's weight prepacking (what inductor's frozen CPU graphs use) and the version counter
    # that says a tensor changed in place: torch has no public name for either
    ("nlgscore.backend.packed_weights", "torch.ops.mkldnn._reorder_linear_weight"): "torch's private op, no public API",
    ("nlgscore.backend.packed_weights", "weight._version"): "torch's in-place version counter, no public accessor",
    # sacreBLEU's per-segment sufficient statistics and its score from summed ones: no public name;
    # its own significance tests (sacrebleu.significance) use the same two methods
    (
        "nlgscore.strings.scorers",
        "self.corpus_metric()._extract_corpus_statistics",
    ): "sacreBLEU's statistics, no public API",
    (
        "nlgscore.strings.scorers",
        "self.corpus_metric()._compute_score_from_stats",
    ): "sacreBLEU's statistics, no public API",
    # the standard library's immediate exit (no cleanup): a stalled Ray stop must end within the drain timeout
    ("nlgscore.serve.ray", "os._exit"): "the stdlib's public os._exit, not a private attribute",
    # a server process whose cut run is still inside torch ends without the interpreter's exit (which would abort)
    ("nlgscore.serve.http.server", "os._exit"): "the stdlib's public os._exit, not a private attribute",
    ("nlgscore.serve.workers.model_process", "os._exit"): "the stdlib's public os._exit, not a private attribute",
    # a forked worker ends without running the parent's atexit handlers it inherited
    ("nlgscore.serve.workers.supervisor", "os._exit"): "the stdlib's public os._exit, not a private attribute",
}


def _private_reads(path: Path) -> Set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own: Set[str] = set()
    reads: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.ctx, ast.Store):
                own.add(node.attr)
            elif not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                reads.add(ast.unparse(node))
    return {expr for expr in reads if expr.rsplit(".", 1)[1] not in own}


def test_no_module_reads_another_modules_private_attributes():
    found = {(name, expr) for name, path in _sources().items() for expr in _private_reads(path)}
    assert found <= set(PRIVATE_READS_ALLOWED), (
        f"private reads across modules: {sorted(found - set(PRIVATE_READS_ALLOWED))}"
    )
    stale = set(PRIVATE_READS_ALLOWED) - found
    assert not stale, f"allowed reads that no longer happen (remove them from the list): {sorted(stale)}"


def test_private_read_detector_sees_one(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "def f(scorer):\n    return scorer._cache, self_ok()\n\n"
        "class A:\n    def g(self):\n        return self._x, other._own\n    _own = 1\n"
    )
    assert _private_reads(path) == {"scorer._cache"}
