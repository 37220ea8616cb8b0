"""Optional dependencies: one place that imports them and says which extra brings them.

>>> require("math", "meta").sqrt(4.0)
2.0
>>> require("no_such_module_here", "plot", "drawing pictures")
Traceback (most recent call last):
...
nlgscore.backend.extras.MissingExtraError: drawing pictures needs the package 'no_such_module_here': pip install 'nlgscore[plot]'
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from nlgscore.errors import NlgscoreError


class MissingExtraError(NlgscoreError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def require(module: str, extra: str, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'nlgscore[extra]'``.

    The error is raised ``from None``: the chained ImportError would add a screen of importlib's
    frames above the one line that says what to do. Where the package is there but one of its
    own imports failed (a broken install), that failure is kept in the message instead.

    Args:
        module: The module to import (``sacrebleu.metrics``).
        extra: The extra of nlgscore that installs it (``meta``).
        purpose: What needs it, for the message (``chrF``).

    Returns:
        The imported module.

    Raises:
        MissingExtraError: ``module`` cannot be imported.

    >>> class Broken:  # a package that is there, but one of its own dependencies is not
    ...     def find_spec(self, name, path=None, target=None):
    ...         if name == "some_metric_package":
    ...             raise ImportError("No module named 'regex'", name="regex")
    >>> sys.meta_path.insert(0, Broken())
    >>> try:
    ...     require("some_metric_package", "meta", "chrF")
    ... except MissingExtraError as err:
    ...     print(err, err.__cause__, err.__suppress_context__)
    chrF needs the package 'some_metric_package': pip install 'nlgscore[meta]' (importing it failed: No module named 'regex') None True
    >>> _ = sys.meta_path.pop(0)
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        what = f"{purpose} needs" if purpose else "this needs"
        package = module.split(".")[0]
        missing = err.name is not None and (module == err.name or module.startswith(err.name + "."))
        cause = "" if missing else f" (importing it failed: {err})"
        raise MissingExtraError(f"{what} the package {package!r}: pip install 'nlgscore[{extra}]'{cause}") from None


def pyplot() -> ModuleType:
    """matplotlib.pyplot, on the file-only Agg backend unless a backend is already active (notebooks)."""
    matplotlib = require("matplotlib", "plot", "drawing pictures")
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
