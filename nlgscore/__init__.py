"""nlgscore: BERTScore, Prism and BARTScore, exact and fast, for the Hugging Face ecosystem.

The public face: :func:`load` (a scorer from a spec, or a client of a running server from a URL),
the scorer classes and their results, :class:`Result` and :class:`Signature`, the error classes,
and the adapters :func:`map_function` (``datasets.map``), :func:`compute_metrics` and
:class:`MetricCallback` (``Trainer``), :func:`evaluate_module` (``evaluate.load``). The task faces
are :mod:`nlgscore.stream` (corpora of any size), :mod:`nlgscore.mbr` (MBR decoding),
:mod:`nlgscore.serve` (serving), :mod:`nlgscore.meta` (meta-evaluation), :mod:`nlgscore.registry`
(the metric table) and :mod:`nlgscore.extend` (for metric authors); ``core``, ``backend``,
``scheduler`` and ``corpus`` are internal.

>>> import nlgscore
>>> scorer = nlgscore.load("bertscore:minilm:L4")
>>> result = scorer.compute(["The cat sat."], ["A cat sat on the mat."])
>>> isinstance(result, nlgscore.Result), str(result.signature).startswith("nlgscore:bertscore|")
(True, True)
>>> try:
...     nlgscore.load("bertscore:minilm", num_layer=4)
... except nlgscore.ArgumentTypeError as err:
...     print(str(err)[:40])
BERTScorer got an unknown option num_lay

Heavy modules are imported on first use, so ``import nlgscore`` stays cheap (no torch) and a
scorer whose module is missing from an installation only fails when it is asked for.
"""

from importlib import import_module
from pathlib import Path
from typing import Any

from nlgscore.backend.threads import prefer_passive_wait

prefer_passive_wait()  # before torch loads: idle OpenMP threads sleep instead of spinning (backend/threads.py)

from nlgscore import _deprecated, scheduler  # noqa: E402, F401 - registers the Call queue behind Scorer.acompute
from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError, NlgscoreError  # noqa: E402
from nlgscore.version import __version__  # noqa: E402

_deprecated.install()  # old module paths keep importing, with a FutureWarning naming the new one

# public name -> (module, attribute); every built-in metric's scorer class is added from its registry row
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
    "MetricCallback": ("nlgscore.integrations.trainer_callback", "MetricCallback"),
    # the error classes raised below the floor's four (each a NlgscoreError, except NonFiniteScoreError)
    "LongInputError": ("nlgscore.core.long_inputs", "LongInputError"),
    "CallCancelled": ("nlgscore.core.call", "CallCancelled"),
    "NonFiniteScoreError": ("nlgscore.core.result", "NonFiniteScoreError"),
    "ModelNotAvailableError": ("nlgscore.backend.models", "ModelNotAvailableError"),
    "IncompleteModelError": ("nlgscore.backend.model_files", "IncompleteModelError"),
    "MissingExtraError": ("nlgscore.backend.extras", "MissingExtraError"),
    "QueueFullError": ("nlgscore.scheduler.microbatch", "QueueFullError"),
    "ServerError": ("nlgscore.remote.client", "ServerError"),
    "ShardError": ("nlgscore.backend.distributed", "ShardError"),
}


def _scorer_classes() -> dict:
    from nlgscore import registry  # the table only: no metric is imported

    paths = [registry.metric(name).scorer for name in registry.metric_names(builtin=True)]
    return {path.rpartition(":")[2]: tuple(path.split(":")) for path in paths if isinstance(path, str)}


_LAZY.update(_scorer_classes())
__all__ = [
    "__version__",
    "load",
    "Result",
    "Signature",
    "evaluate_module",
    "bertscore",
    "map_function",
    "compute_metrics",
    "MetricCallback",
    # the scorer classes of the built-in metrics and their results
    "BERTScorer",
    "PrismScorer",
    "BARTScorer",
    "ChrFScorer",
    "BLEUScorer",
    "TERScorer",
    "RougeScorer",
    "BERTScoreResult",
    "PrismResult",
    "BARTScoreResult",
    # the error classes
    "NlgscoreError",
    "ArgumentError",
    "ArgumentTypeError",
    "DataError",
    "LongInputError",
    "CallCancelled",
    "NonFiniteScoreError",
    "ModelNotAvailableError",
    "IncompleteModelError",
    "MissingExtraError",
    "QueueFullError",
    "ServerError",
    "ShardError",
]


def evaluate_module(name: str) -> str:
    """Folder of the ``evaluate`` module ``name`` shipped in the package, for ``evaluate.load``.

    Works from any working directory and in a wheel install (the folder holds ``<name>.py`` and
    its card); in a checkout it is ``metrics/<name>``.

    Args:
        name: a shipped module's name (``bertscore``, ``prism``, ``bartscore`` ...).

    Returns:
        The folder's path, for ``evaluate.load(evaluate_module(name))``.

    Raises:
        ArgumentError: no module of that name is shipped; the message lists the shipped ones.

    Example:
        >>> Path(evaluate_module("bertscore"), "bertscore.py").is_file()
        True
        >>> evaluate_module("bleurt")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: no evaluate module named 'bleurt'; shipped: ...
    """
    folder = Path(str(import_module("nlgscore.evaluate_modules").__file__)).parent
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
