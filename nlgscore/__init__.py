"""nlgscore: BERTScore, Prism and BARTScore, exact and fast, for the Hugging Face ecosystem.

Heavy modules are imported on first use, so ``import nlgscore`` stays cheap and a scorer whose
module is missing from an installation only fails when it is asked for.
"""

from importlib import import_module
from pathlib import Path
from typing import Any

from nlgscore.backend.threads import prefer_passive_wait
from nlgscore.core.version import __version__

prefer_passive_wait()  # before torch loads: idle OpenMP threads sleep instead of spinning (backend/threads.py)

# public name -> (module, attribute); every metric's scorer class is added from its registry row
_LAZY = {
    "BERTScoreResult": ("nlgscore.bertscore.scorer", "BERTScoreResult"),
    "bertscore": ("nlgscore.bertscore", None),  # the module, callable as the one-shot function
    "PrismResult": ("nlgscore.seq2seq.prism", "PrismResult"),
    "BARTScoreResult": ("nlgscore.seq2seq.bartscore", "BARTScoreResult"),
    "Result": ("nlgscore.core.result", "Result"),
    "Signature": ("nlgscore.core.signature", "Signature"),
    "load": ("nlgscore.registry", "load"),
    "map_function": ("nlgscore.integrations.datasets", "map_function"),
    "compute_metrics": ("nlgscore.integrations.trainer", "compute_metrics"),
}


def _scorer_classes() -> dict:
    from nlgscore import registry  # the table only: no metric is imported

    paths = [registry.metric(name).scorer for name in registry.metric_names(builtin=True)]
    return {path.rpartition(":")[2]: tuple(path.split(":")) for path in paths if isinstance(path, str)}


_LAZY.update(_scorer_classes())
__all__ = ["__version__", "evaluate_module", *_LAZY]


def evaluate_module(name: str) -> str:
    """Folder of the ``evaluate`` module ``name`` shipped in the package, for ``evaluate.load``.

    Works from any working directory and in a wheel install (the folder holds ``<name>.py`` and
    its card); in a checkout it is ``metrics/<name>``.

    >>> Path(evaluate_module("bertscore"), "bertscore.py").is_file()
    True
    >>> evaluate_module("bleurt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.core.errors.ArgumentError: no evaluate module named 'bleurt'; shipped: ...
    """
    from nlgscore.core.errors import ArgumentError

    folder = Path(import_module("nlgscore.evaluate_modules").__file__).parent
    shipped = sorted(p.parent.name for p in folder.glob("*/*.py") if p.stem == p.parent.name)
    if name not in shipped:
        raise ArgumentError(f"no evaluate module named {name!r}; shipped: {', '.join(shipped)}")
    return str(folder / name)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = import_module(module) if attribute is None else getattr(import_module(module), attribute)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
