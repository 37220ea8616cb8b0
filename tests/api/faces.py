"""The public faces of the package: the modules whose ``__all__`` is the promised API."""

FACES = (
    "nlgscore",
    "nlgscore.mbr",
    "nlgscore.stream",
    "nlgscore.serve",
    "nlgscore.meta",
    "nlgscore.extend",
    "nlgscore.registry",
)
# rooms whose modules may move without notice: their __init__ docstrings say so
INTERNAL_ROOMS = ("core", "backend", "scheduler", "corpus")
# what evaluate modules, Hub cards and docs may import besides the faces (each adapter is its
# framework's front door; evaluate_modules holds the shipped evaluate modules' shared helpers)
ALSO_PUBLIC = ("nlgscore.evaluate_modules", "nlgscore.integrations")
