"""The public faces of the package: the modules whose ``__all__`` is the promised API."""

import sys
from pathlib import Path

# the reference pages render the same faces: one list, kept where the site is built (docs/hooks is
# on pytest's path; a script run of the snapshot test puts it there too)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "hooks"))
from docstring_markdown import FACES  # noqa: F401 (re-exported to the tests that import it from here)

# rooms whose modules may move without notice: their __init__ docstrings say so
INTERNAL_ROOMS = ("core", "backend", "scheduler", "corpus")
# what evaluate modules, Hub cards and docs may import besides the faces (each adapter is its
# framework's front door; evaluate_modules holds the shipped evaluate modules' shared helpers)
ALSO_PUBLIC = ("nlgscore.evaluate_modules", "nlgscore.integrations")
