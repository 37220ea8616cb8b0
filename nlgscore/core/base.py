"""The template every scorer follows (in the spirit of sacreBLEU's ``Metric``).

``Scorer.compute(predictions, references=None, sources=None)`` runs the shared steps once, here:

1. argument checks (errors name the argument and item, :mod:`nlgscore.core.inputs`);
2. flattening ragged references into (prediction, reference) pairs (a source-based call has
   one source per prediction);
3. de-duplication of identical pairs;
4. sharding the distinct pairs across processes and gathering them in input order
   (:mod:`nlgscore.core.distributed`);
5. aggregating each per-pair column over an item's references with the metric's rule
   (:attr:`Scorer.multiref`: ``"max"`` for BERTScore, ``"mean"`` for Prism, ``"mean"|"max"`` for
   BARTScore);
6. building the :class:`~nlgscore.core.result.Result` and refusing a non-finite score.

A metric supplies small hooks: :meth:`Scorer._prepare` (per-call work on all the texts, e.g.
tokenising or idf), :meth:`Scorer._score_pairs` (per-pair columns of a share of distinct pairs),
:meth:`Scorer._finish` (per-item columns → Result) and :meth:`Scorer._signature_fields`.
Token-budget batching with OOM back-off lives in :mod:`nlgscore.core.batching`, the one
run-time policy (device, dtype, budget) in :mod:`nlgscore.core.runtime`.

>>> import numpy as np
>>> class Overlap(Scorer):
...     name = "overlap"
...     def _score_pairs(self, pairs, state):
...         return {"jaccard": np.array([len(set(p.split()) & set(r.split())) / len(set(p.split()) | set(r.split())) for p, r in pairs])}
...     def _finish(self, call, columns):
...         return Result(self.make_signature(call), columns, "jaccard")
...     def _signature_fields(self, call):
...         return {"tok": "space"}
>>> result = Overlap().compute(["a b", "c"], [["a b", "a"], "d"])
>>> result.scores, str(result.signature).split("|")[:3]
([0.75, 0.0], ['nlgscore:overlap', 'tok:space', 'multiref:mean'])
>>> Overlap().matrix(["a b", "c"], ["a", "c", "a b"]).tolist()  # every prediction against every reference
[[0.5, 0.0, 1.0], [0.0, 1.0, 0.0]]
"""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.core.batching import unique
from nlgscore.core.distributed import shard
from nlgscore.core.errors import ArgumentError, ArgumentTypeError
from nlgscore.core.inputs import check_references, check_same_length, check_texts, flatten_references
from nlgscore.core.result import Result, check_finite
from nlgscore.core.runtime import Runtime, resolve_runtime
from nlgscore.core.signature import Signature

MULTIREF_RULES = ("mean", "max")
INPUT_NAMES = ("predictions", "references", "sources")


@dataclass
class Call:
    """One ``compute`` call after checking: what the hooks see."""

    predictions: List[str]
    side: str  # "references" or "sources": what the predictions are scored against
    groups: List[List[str]]  # per prediction, its references (or its one source)
    multiref: str
    options: Dict[str, Any] = field(default_factory=dict)


def aggregate(values: np.ndarray, owner: Sequence[int], n: int, rule: str) -> np.ndarray:
    """Per-pair ``values`` (pairs first) → per-item values by ``rule`` over each item's pairs.

    >>> aggregate(np.array([1.0, 3.0, 5.0]), [0, 0, 1], 2, "mean").tolist(), aggregate(np.array([1.0, 3.0, 5.0]), [0, 0, 1], 2, "max").tolist()
    ([2.0, 5.0], [3.0, 5.0])
    """
    owner_arr = np.asarray(owner, dtype=np.int64)
    shape = (n,) + values.shape[1:]
    if rule == "max":
        out = np.full(shape, -np.inf)
        np.maximum.at(out, owner_arr, values)
        return out
    if rule != "mean":
        raise ValueError(f"multiref must be one of {', '.join(MULTIREF_RULES)}, got {rule!r}")
    out = np.zeros(shape)
    np.add.at(out, owner_arr, values)
    counts = np.bincount(owner_arr, minlength=n).reshape((n,) + (1,) * (values.ndim - 1))
    return out / np.maximum(counts, 1)


class Scorer(ABC):
    """A loaded metric: ``compute(predictions, references=None, sources=None)`` → :class:`Result`.

    ``name`` is the metric's name in signatures and specs; ``needs`` says which input
    ``compute`` scores against by default; ``multiref`` is the rule that turns per-reference
    columns into per-item ones.
    """

    name: ClassVar[str] = ""
    needs: Tuple[str, ...] = ("references",)
    multiref: ClassVar[str] = "mean"
    # Which default budget of nlgscore.core.runtime.DEFAULT_BUDGETS: "encoder" or "seq2seq".
    budget_family: ClassVar[str] = "encoder"
    _runtime: Optional[Runtime] = None

    # -- run-time settings: one Runtime, resolved once by the constructor ----------------------
    def _init_runtime(self, device: Any = None, dtype: Any = None, batch_size: Any = None, max_tokens: Any = None,
                      progress: Any = False, accelerator: Any = None) -> Runtime:
        """Resolve and keep the scorer's :class:`~nlgscore.core.runtime.Runtime` (before loading a
        model, so that a bad argument fails fast); the loader then settles ``dtype="auto"``."""
        self._runtime = resolve_runtime(self.budget_family, device, dtype, batch_size, max_tokens, progress, accelerator)
        return self._runtime

    @property
    def runtime(self) -> Runtime:
        """Device, dtype, budget, progress and accelerator of this scorer (a call's overrides
        go to ``compute(..., batch_size=, max_tokens=, progress=)``, never here)."""
        if self._runtime is None:  # a model-free metric that never called _init_runtime
            self._runtime = resolve_runtime(self.budget_family, device="cpu")
        return self._runtime

    @runtime.setter
    def runtime(self, value: Runtime) -> None:
        if not isinstance(value, Runtime):
            raise ArgumentTypeError(f"runtime must be a nlgscore.core.runtime.Runtime, got {type(value).__name__}")
        self._runtime = value

    def _reset_runtime(self, **settings: Any) -> None:
        """Backward-compatible setters: ``settings`` replace the scorer's (None → the default)."""
        current = self.runtime
        fields = dict(device=current.device, dtype=current.dtype, batch_size=current.batch_size, max_tokens=current.max_tokens,
                      progress=current.progress, accelerator=current.accelerator)
        fields.update(settings)
        self._runtime = resolve_runtime(self.budget_family, **fields)

    @property
    def device(self) -> Any:
        """The ``torch.device`` the model runs on."""
        return self.runtime.device

    @property
    def dtype(self) -> Any:
        """The ``torch.dtype`` of the model (``dtype="auto"``: what it resolved to)."""
        return self.runtime.torch_dtype

    @property
    def batch_size(self) -> Optional[int]:
        """Most items per batch (None: no cap beyond :attr:`max_tokens`)."""
        return self.runtime.batch_size

    @batch_size.setter
    def batch_size(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(batch_size=)
        self._reset_runtime(batch_size=value)

    @property
    def max_tokens(self) -> int:
        """Padded tokens per batch; setting None restores the device default; 0 or less is an error."""
        return self.runtime.max_tokens

    @max_tokens.setter
    def max_tokens(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(max_tokens=)
        self._reset_runtime(max_tokens=value)

    @property
    def progress(self) -> bool:
        """Whether calls draw a progress bar."""
        return self.runtime.progress

    @progress.setter
    def progress(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(progress=)
        self._reset_runtime(progress=value)

    @property
    def accelerator(self) -> Any:
        """The ``accelerate.Accelerator`` calls are sharded over (None: this process scores all)."""
        return self.runtime.accelerator

    @accelerator.setter
    def accelerator(self, value: Any) -> None:
        self._reset_runtime(accelerator=value)

    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> Result:
        """Score each prediction against its reference(s) or source; results in input order."""
        return self._run(predictions, references, sources)

    def matrix(self, predictions: Sequence[str], references: Sequence[str], *, column: Optional[str] = None, **call_options: Any) -> np.ndarray:
        """The score of every ``(predictions[i], references[j])`` pair: an array of shape
        ``(len(predictions), len(references))`` (a utility matrix for MBR decoding, reranking
        or consensus), equal to :meth:`compute` over all pairs.

        ``column`` picks another column than the primary one (e.g. ``"precision"``);
        ``call_options`` go to :meth:`compute`. Each distinct pair is scored once and each
        distinct text encoded once. Source-based scoring (QE reranking) is
        ``compute(predictions, sources=...)``.
        """
        preds = check_texts("predictions", predictions)
        refs = check_texts("references", references)
        if column is not None and not isinstance(column, str):
            raise ArgumentTypeError(f"column must be a column name (str) or None, got {type(column).__name__}")
        up, pred_of = unique(preds)
        ur, ref_of = unique(refs)
        result = self.compute([p for p in up for _ in ur], [r for _ in up for r in ur], **call_options)
        values = result._values
        name = result.primary if column is None else column
        if name not in values:
            raise ArgumentError(f"column must be one of {', '.join(values)} for this {self.name} call, got {column!r}")
        grid = values[name]
        if grid.ndim == 2:  # one row per layer (BERTScore all_layers): the result's layer
            grid = grid[result.layer if result.layer is not None else -1]
        grid = grid.reshape(len(up), len(ur))
        return grid[np.ix_(pred_of, ref_of)] if preds and refs else np.zeros((len(preds), len(refs)))

    @property
    def signature(self) -> Signature:
        """Settings of this scorer that change a number."""
        return self.make_signature(None)

    def make_signature(self, call: Optional[Call]) -> Signature:
        """The signature of ``call`` (None: of the scorer's defaults): the metric's fields, then
        the multi-reference rule for reference-based scores."""
        fields = self._signature_fields(call)
        side = call.side if call is not None else self.needs[0]
        if side == "references":
            fields["multiref"] = call.multiref if call is not None else self.multiref
        return Signature(self.name, **fields)

    # -- the template ---------------------------------------------------------------------
    def _side(self, references: Any, sources: Any, options: Dict[str, Any]) -> str:
        """Which input a call is scored against (default: the first of ``needs``)."""
        return self.needs[0]

    def _run(
        self,
        predictions: Any,
        references: Any,
        sources: Any,
        names: Tuple[str, str, str] = INPUT_NAMES,
        multiref: Optional[str] = None,
        **options: Any,
    ) -> Result:
        side = self._side(references, sources, options)
        preds = check_texts(names[0], predictions)
        given, name = (references, names[1]) if side == "references" else (sources, names[2])
        if given is None:
            raise ValueError(f"{name} are required for this {self.name} call (got {name}=None)")
        if side == "references":
            groups = check_references(name, given, len(preds))
        else:
            srcs = check_texts(name, given)
            check_same_length(**{names[0]: preds, name: srcs})
            groups = [[s] for s in srcs]
        rule = multiref or self.multiref
        if rule not in MULTIREF_RULES:
            raise ValueError(f"multi-reference aggregation must be one of {', '.join(MULTIREF_RULES)}, got {rule!r}")
        call = Call(preds, side, groups, rule, options)
        flat, owner = flatten_references(groups)
        hyps = [preds[i] for i in owner]
        state = self._prepare(call, hyps, flat)
        pairs, inverse = unique(list(zip(hyps, flat)))

        def run(indices: List[int]) -> List[Dict[str, Any]]:
            cols = self._score_pairs([pairs[i] for i in indices], state)
            return [{name: values[k] for name, values in cols.items()} for k in range(len(indices))]

        rows = shard(len(pairs), run, self.accelerator)
        if rows:
            per_pair = {name: np.asarray([rows[u][name] for u in inverse], dtype=np.float64) for name in rows[0]}
        else:
            per_pair = {name: np.asarray(values, dtype=np.float64) for name, values in self._score_pairs([], state).items()}
        columns = {name: aggregate(values, owner, len(preds), rule) for name, values in per_pair.items()}
        result = self._finish(call, columns)
        return check_finite(result, self.name) if preds else result

    # -- hooks ----------------------------------------------------------------------------
    def _prepare(self, call: Call, hyps: List[str], others: List[str]) -> Any:
        """Per-call work on all flattened pairs before scoring (default: nothing)."""
        return None

    # A metric that overrides compute() and signature itself need not implement these three.
    def _score_pairs(self, pairs: List[Tuple[str, str]], state: Any) -> Dict[str, np.ndarray]:
        """Columns for ``(prediction, reference-or-source)`` pairs: arrays with pairs first
        (also for no pairs, so that empty results keep their columns)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _score_pairs (or override compute)")

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        """Per-item columns (aggregated over references) → the metric's Result."""
        raise NotImplementedError(f"{type(self).__name__} must implement _finish (or override compute)")

    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        """The metric's signature fields for ``call`` (None: the scorer's defaults)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _signature_fields (or override signature)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.signature})"
