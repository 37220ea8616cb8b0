"""Old import paths of moved modules: each still imports, warns once, and gives the new module.

Public modules moved as the package's rooms took their shape (``nlgscore.runs.mbr`` is
``nlgscore.mbr``, ``nlgscore.core.errors`` is ``nlgscore.errors``, ...). A program written against an old path keeps
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
from typing import Dict, Optional, Set, Tuple

# old module path -> (its new module path, the public face to import from instead, if it differs).
# A row covers the old path's submodules too (``nlgscore.runs.mbr.decode`` -> ``nlgscore.mbr.decode``).
# Only the public paths that moved have a row (CHANGELOG.md's Deprecated section names them): the
# package was never published, so an internal module moves without one.
MOVED: Dict[str, Tuple[str, str]] = {
    # the runs/ room, split by what it holds: MBR and corpora public, the Call queue internal
    "nlgscore.runs.mbr": ("nlgscore.mbr", ""),
    "nlgscore.runs.stream": ("nlgscore.stream", ""),
    "nlgscore.runs.microbatch": ("nlgscore.scheduler.microbatch", "nlgscore.serve"),
    # the face, not its module: the serving modules are internal and move within serve/
    "nlgscore.runs.heap": ("nlgscore.serve", ""),
    # the floor every room raises from and reads the version at
    "nlgscore.core.errors": ("nlgscore.errors", "nlgscore"),
    "nlgscore.core.version": ("nlgscore.version", "nlgscore"),
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
    where = f" (its public names: from {face} import ...)" if face and face != new else ""
    return f"{old} is deprecated and will be removed: import {new}{where}"


class _Loader(importlib.abc.Loader):
    def __init__(self, row: Optional[str]) -> None:
        self.row = row

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if self.row is None:  # an old package that only held moved modules
            module.__path__ = []
            return
        new, _ = MOVED[self.row]
        suffix = module.__name__[len(self.row) :]
        target = importlib.import_module(new + suffix)
        if self.row not in _WARNED:
            _WARNED.add(self.row)
            # importlib's own frames are skipped, so the warning points at the importing line
            warnings.warn(message(self.row), FutureWarning, stacklevel=2)
        # the import statement returns what sys.modules holds once the module ran: the new module itself
        sys.modules[module.__name__] = target


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
