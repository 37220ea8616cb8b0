"""The public face for metric authors: what a new metric's scorer is written with.

A metric subclasses :class:`Scorer` and states what an item's columns are (CONTRIBUTING.md, "Add
a metric"); the template does the rest. :class:`Call` is a checked call (its ``runtime`` holds
this call's budgets), :class:`Item` one prediction with the inputs the metric ``needs``,
:func:`run_batches` the length-sorted token-budget batches with out-of-memory back-off,
:func:`resolve` a model id, folder or alias as a local folder (offline errors name the flag),
:func:`table` the package's constants, :class:`Result` and :class:`Signature` what a scorer
returns and records. Register the metric with :func:`nlgscore.registry.register`.

>>> from typing import Any, Dict, List
>>> import numpy as np
>>> from nlgscore.extend import Call, Item, Result, Scorer
>>> class Length(Scorer):
...     name, needs, multiref, columns = "length", ("references",), "max", ("ratio",)
...     def _score_items(self, items: List[Item], state: Any) -> Dict[str, np.ndarray]:
...         return {"ratio": np.array([len(i.prediction) / max(len(i.reference), 1) for i in items])}
...     def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
...         return Result(self.make_signature(call), columns, primary="ratio")
...     def _signature_fields(self, call: Any) -> Dict[str, Any]:
...         return {"unit": "char"}
>>> Length().compute(["abcd", "ab"], [["ab", "abcd"], "abcd"]).scores
[2.0, 0.5]
"""

from nlgscore.backend.batching import run_batches
from nlgscore.backend.models import ResolvedModel, resolve
from nlgscore.backend.tables import table
from nlgscore.core.base import Scorer
from nlgscore.core.call import Call, MatrixCall
from nlgscore.core.inputs import Item
from nlgscore.core.result import Result
from nlgscore.core.runtime import Runtime, settle_dtype
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.core.signature import Signature

__all__ = [
    "Call",
    "Item",
    "MatrixCall",
    "ResolvedModel",
    "Result",
    "Runtime",
    "Scorer",
    "ScorerLike",
    "Signature",
    "resolve",
    "run_batches",
    "settle_dtype",
    "table",
]
