"""The public faces of the package: the modules whose ``__all__`` is the promised API."""

# the reference pages render the same faces: one list, kept where the site is built
from docstring_markdown import FACES  # noqa: F401 (re-exported to the tests that import it from here)

# rooms whose modules may move without notice: their __init__ docstrings say so
INTERNAL_ROOMS = ("core", "backend", "scheduler", "corpus")
# what evaluate modules, Hub cards and docs may import besides the faces (each adapter is its
# framework's front door; evaluate_modules holds the shipped evaluate modules' shared helpers)
ALSO_PUBLIC = ("nlgscore.evaluate_modules", "nlgscore.integrations")
