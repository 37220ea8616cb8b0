"""Old import paths of moved modules: each still imports, warns once, and gives the new module.

Modules moved as the package's rooms took their shape (``nlgscore.runs.mbr`` is ``nlgscore.mbr``,
``nlgscore.core.errors`` is ``nlgscore.errors``, ...). A program written against an old path keeps
working: the import returns the very module of the new path (the same classes, so ``isinstance``
and ``except`` keep matching) and a :class:`FutureWarning`, shown by default, names the new path,
once per process for each row of :data:`MOVED`. sacreBLEU's ``compat.py`` and torchmetrics'
``text/_deprecated.py`` keep old entry points the same way. Package code never imports an old
path (``tests/api/test_old_paths.py`` checks it).

:func:`install` puts the finder in front of :data:`sys.meta_path` (``import nlgscore`` does it),
so an old submodule path (``nlgscore.runs.mbr.decode``) is never loaded a second time from the
new folder as a module of its own.

>>> from nlgscore.core.errors import ArgumentError  # an old path: a FutureWarning, once
>>> import nlgscore.errors
>>> ArgumentError is nlgscore.errors.ArgumentError
True
>>> message("nlgscore.core.errors")
'nlgscore.core.errors is deprecated and will be removed: import nlgscore.errors (its public names: from nlgscore import ...)'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Callable, Dict, Optional, Sequence, Set, Tuple

# old module path -> (its new module path(s), the public face to import from instead, if it differs).
# A row covers the old path's submodules too (``nlgscore.runs.mbr.decode`` -> ``nlgscore.mbr.decode``).
# Several new paths: the old module's names now live in several modules (one module split in two).
MOVED: Dict[str, Tuple[Tuple[str, ...], str]] = {
    # the runs/ room, split by what it holds: MBR and corpora public, the scheduler and output files internal
    "nlgscore.runs.mbr": (("nlgscore.mbr",), ""),
    "nlgscore.runs.stream": (("nlgscore.stream",), ""),
    "nlgscore.runs.outputs": (("nlgscore.corpus.outputs",), ""),
    "nlgscore.runs.microbatch": (("nlgscore.scheduler.microbatch",), "nlgscore.serve"),
    "nlgscore.runs.queued_call": (("nlgscore.scheduler.queued_call",), ""),
    "nlgscore.runs.answer_wait": (("nlgscore.scheduler.answer_wait",), ""),
    "nlgscore.runs.heap": (("nlgscore.serve.heap",), "nlgscore.serve"),
    "nlgscore.stream.windows": (("nlgscore.stream.row_windows",), "nlgscore.stream"),
    # the floor every room raises from and reads the version at
    "nlgscore.core.errors": (("nlgscore.errors",), "nlgscore"),
    "nlgscore.core.version": (("nlgscore.version",), "nlgscore"),
    # core/ split into the contract and the plumbing below it (backend/), the queue and the files above
    "nlgscore.core.batching": (("nlgscore.backend.batching",), "nlgscore.extend"),
    "nlgscore.core.distributed": (("nlgscore.backend.distributed",), ""),
    "nlgscore.core.extras": (("nlgscore.backend.extras",), ""),
    "nlgscore.core.gemm": (("nlgscore.backend.gemm",), ""),
    "nlgscore.core.hub": (("nlgscore.backend.hub",), ""),
    "nlgscore.core.kernel_cache": (("nlgscore.backend.kernel_cache",), ""),
    "nlgscore.core.loading": (("nlgscore.backend.loading",), ""),
    "nlgscore.core.model_files": (("nlgscore.backend.model_files",), ""),
    "nlgscore.core.models": (("nlgscore.backend.models",), "nlgscore.extend"),
    "nlgscore.core.progress": (("nlgscore.backend.progress",), ""),
    "nlgscore.core.tables": (("nlgscore.backend.tables",), "nlgscore.extend"),
    "nlgscore.core.threads": (("nlgscore.backend.threads",), ""),
    "nlgscore.core.microbatch": (("nlgscore.scheduler.microbatch",), "nlgscore.serve"),
    "nlgscore.core.resumable_run": (("nlgscore.corpus.outputs.driver",), ""),
    "nlgscore.core.resumable": (("nlgscore.corpus.outputs.resumable",), ""),
    "nlgscore.core.jsonl": (("nlgscore.corpus.outputs.jsonl",), ""),
    "nlgscore.core.output_lock": (("nlgscore.corpus.outputs.lock",), ""),
    # the first flat layout: one module per file at the top
    "nlgscore.base": (("nlgscore.core.base",), "nlgscore.extend"),
    "nlgscore.inputs": (("nlgscore.core.inputs",), "nlgscore.extend"),
    "nlgscore.result": (("nlgscore.core.result",), "nlgscore"),
    "nlgscore.signature": (("nlgscore.core.signature",), "nlgscore"),
    "nlgscore.tables": (("nlgscore.backend.tables",), "nlgscore.extend"),
    "nlgscore.batching": (("nlgscore.backend.batching",), "nlgscore.extend"),
    "nlgscore.distributed": (("nlgscore.backend.distributed",), ""),
    "nlgscore.gemm": (("nlgscore.backend.gemm",), ""),
    "nlgscore.hub": (("nlgscore.backend.hub",), ""),
    "nlgscore.models": (("nlgscore.backend.models",), "nlgscore.extend"),
    "nlgscore.idf": (("nlgscore.bertscore.idf",), ""),
    "nlgscore.embedding": (("nlgscore.bertscore.embedding",), ""),
    "nlgscore.matching": (("nlgscore.bertscore.matching",), ""),
    "nlgscore.rescale": (("nlgscore.bertscore.rescale",), ""),
    "nlgscore.plot": (("nlgscore.bertscore.plot", "nlgscore.meta.plot"), ""),
    "nlgscore.prism": (("nlgscore.seq2seq.prism",), "nlgscore"),
    "nlgscore.bartscore": (("nlgscore.seq2seq.bartscore",), "nlgscore"),
    "nlgscore.likelihood": (("nlgscore.seq2seq.likelihood",), ""),
    # meta/: data readers, statistics and tasks in their own folders
    "nlgscore.meta.mqm": (("nlgscore.meta.tasks.human_scores",), "nlgscore.meta"),
    "nlgscore.meta.descriptors": (("nlgscore.meta.tasks.descriptors",), "nlgscore.meta"),
    "nlgscore.meta.runner": (("nlgscore.meta.tasks.runner",), "nlgscore.meta"),
    "nlgscore.meta.loaders": (("nlgscore.meta.data.loaders",), ""),
    "nlgscore.meta.wmt21": (("nlgscore.meta.data.wmt21",), ""),
    "nlgscore.meta.ratings": (("nlgscore.meta.data.ratings",), ""),
    "nlgscore.meta.mtme": (("nlgscore.meta.data.mtme",), ""),
    "nlgscore.meta.precomputed": (("nlgscore.meta.data.precomputed",), ""),
    "nlgscore.meta.files": (("nlgscore.meta.data.files",), ""),
    "nlgscore.meta.alignment": (("nlgscore.meta.data.alignment",), ""),
    "nlgscore.meta.resample": (("nlgscore.meta.stats.resample",), "nlgscore.meta"),
    "nlgscore.meta.summ": (("nlgscore.meta.stats.summary",), "nlgscore.meta"),
    "nlgscore.meta.wmt": (("nlgscore.meta.stats.wmt",), "nlgscore.meta"),
    "nlgscore.meta.calibrate": (("nlgscore.calibration.layers",), ""),
    "nlgscore.meta.rescale_baseline": (("nlgscore.calibration.baseline",), ""),
}
# Old packages that only held moved modules: importable (empty) so that their old submodules are.
OLD_PACKAGES = ("nlgscore.runs",)

_WARNED: Set[str] = set()


def _row(fullname: str) -> Optional[str]:
    """The row of :data:`MOVED` that covers ``fullname`` (itself or its nearest old package)."""
    name = fullname
    while name.count("."):
        if name in MOVED:
            return name
        name = name.rpartition(".")[0]
    return None


def message(old: str) -> str:
    """The warning of the row ``old``: what to import instead."""
    new, face = MOVED[old]
    instead = " and ".join(new)
    where = f" (its public names: from {face} import ...)" if face and face not in new else ""
    return f"{old} is deprecated and will be removed: import {instead}{where}"


class _Loader(importlib.abc.Loader):
    def __init__(self, row: Optional[str]) -> None:
        self.row = row

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if self.row is None:  # an old package that only held moved modules
            module.__path__ = []  # type: ignore[attr-defined]
            return
        new, _ = MOVED[self.row]
        suffix = module.__name__[len(self.row) :]
        targets = [importlib.import_module(path + suffix) for path in new]
        if self.row not in _WARNED:
            _WARNED.add(self.row)
            # importlib's own frames are skipped, so the warning points at the importing line
            warnings.warn(message(self.row), FutureWarning, stacklevel=2)
        if len(targets) == 1:
            # the import statement returns what sys.modules holds once the module ran: the new module itself
            sys.modules[module.__name__] = targets[0]
        else:
            module.__getattr__ = _forward(targets)  # type: ignore[attr-defined]


def _forward(targets: Sequence[types.ModuleType]) -> Callable[[str], object]:
    """A module `__getattr__` that finds each name in the first of `targets` that has it."""

    def __getattr__(name: str) -> object:
        for target in targets:
            if hasattr(target, name):
                return getattr(target, name)
        raise AttributeError(name)

    return __getattr__


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if not fullname.startswith("nlgscore."):
            return None
        if fullname in OLD_PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _Loader(None), is_package=True)
        row = _row(fullname)
        if row is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(row), is_package=True)


_FINDER = _Finder()


def install() -> None:
    """Put the finder of old paths first on :data:`sys.meta_path` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
