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
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'nlgscore[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        what = f"{purpose} needs" if purpose else "this needs"
        raise MissingExtraError(
            f"{what} the package {module.split('.')[0]!r}: pip install 'nlgscore[{extra}]'"
        ) from err


def pyplot() -> ModuleType:
    """matplotlib.pyplot, on the file-only Agg backend unless a backend is already active (notebooks)."""
    matplotlib = require("matplotlib", "plot", "drawing pictures")
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
