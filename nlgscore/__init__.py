"""nlgscore: BERTScore, Prism and BARTScore, exact and fast, for the Hugging Face ecosystem.

Heavy modules are imported on first use, so ``import nlgscore`` stays cheap and a scorer whose
module is missing from an installation only fails when it is asked for.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# public name -> (module, attribute)
_LAZY = {
    "BERTScorer": ("nlgscore.bertscore.scorer", "BERTScorer"),
    "BERTScoreResult": ("nlgscore.bertscore.scorer", "BERTScoreResult"),
    "bertscore": ("nlgscore.bertscore", None),  # the module, callable as the one-shot function
    "PrismScorer": ("nlgscore.seq2seq.prism", "PrismScorer"),
    "BARTScorer": ("nlgscore.seq2seq.bartscore", "BARTScorer"),
    "PrismResult": ("nlgscore.seq2seq.prism", "PrismResult"),
    "BARTScoreResult": ("nlgscore.seq2seq.bartscore", "BARTScoreResult"),
    "Result": ("nlgscore.core.result", "Result"),
    "Signature": ("nlgscore.core.signature", "Signature"),
    "load": ("nlgscore.registry", "load"),
    "map_function": ("nlgscore.integrations.datasets", "map_function"),
    "compute_metrics": ("nlgscore.integrations.trainer", "compute_metrics"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = import_module(module) if attribute is None else getattr(import_module(module), attribute)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
