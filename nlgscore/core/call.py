"""A checked call: what :meth:`Scorer.make_call <nlgscore.core.base.Scorer.make_call>` returns
and :meth:`Scorer.run <nlgscore.core.base.Scorer.run>` scores.

A :class:`Call` holds a ``compute`` call after the template's front half (needs, argument checks,
one :class:`~nlgscore.core.inputs.Item` per prediction and reference), so whoever queues calls
(the micro-batcher, a server) checks each request once and never re-reads a scorer's hooks:

* :attr:`Call.merge_key` says which calls may be scored as one (equal keys), None for a call
  that merges with nothing (BERTScore's per-call idf);
* :meth:`Call.concat` joins calls of one key; :meth:`Result.split <nlgscore.core.result.Result.split>`
  cuts the result back by :attr:`Call.size`;
* :attr:`Call.cost` is the call's size in estimated tokens (a scheduler's token budget);
* :meth:`Call.cancel` asks a call not to be scored (a client that left, a deadline passed): a
  queued call is dropped, a running call stops between its batches (a matrix call between its
  chunks). A :meth:`Call.concat` call is cancelled only once every one of its calls is: one
  caller leaving never costs the others their answers.

A :class:`MatrixCall` is the checked form of ``matrix(predictions, references)``: never merged.

>>> from nlgscore.core.inputs import make_items
>>> def call(preds, refs):
...     items, owner = make_items(preds, refs)
...     return Call(preds, ("references",), refs, None, "max", items=items, owner=owner)
>>> both = Call.concat([call(["a", "b"], [["x"], ["y", "z"]]), call(["c"], [["x"]])])
>>> both.size, both.owner, [item.reference for item in both.items]
(3, [0, 1, 1, 2], ['x', 'y', 'z', 'x'])
>>> both.merge_key == call(["d"], [["w"]]).merge_key, both.cost > 0
(True, True)
>>> parts = [call(["a"], [["x"]]), call(["b"], [["y"]])]
>>> joined = Call.concat(parts)
>>> parts[0].cancel(); joined.cancelled
False
>>> parts[1].cancel(); joined.cancelled
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, Hashable, List, Optional, Sequence, Tuple

from nlgscore.core.cache import content_key
from nlgscore.core.inputs import Item
from nlgscore.core.runtime import CALL_RUNTIME_OPTIONS
from nlgscore.errors import NlgscoreError

__all__ = ["Call", "CallCancelled", "MatrixCall", "estimate_tokens"]

# Characters per token of a subword vocabulary on English text (BPE/WordPiece average about 4):
# the scheduler's estimate of a call's tokens before any tokenizer has seen it.
CHARS_PER_TOKEN = 4
SPECIAL_TOKENS = 2  # [CLS]/[SEP], <s>/</s> per text


class CallCancelled(NlgscoreError, RuntimeError):
    """A call was cancelled (its client left, or its deadline passed) before it was scored."""


def estimate_tokens(text: Optional[str]) -> int:
    """An estimate of ``text``'s tokens (none for a missing input).

    >>> estimate_tokens("It is cold today."), estimate_tokens(None)
    (6, 0)
    """
    return 0 if text is None else len(text) // CHARS_PER_TOKEN + SPECIAL_TOKENS


class _Flag:
    """A flag one thread sets and others read: ``threading.Event`` without its Condition (nothing
    waits on a call's flag; an Event costs as much as the rest of a one-item call's checks)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class _AllFlag(_Flag):
    """The flag of a joined call: set once every part's flag is (setting it sets them all)."""

    __slots__ = ("_parts",)

    def __init__(self, parts: Sequence[_Flag]) -> None:
        super().__init__()
        self._parts = tuple(parts)

    def set(self) -> None:
        for part in self._parts:
            part.set()

    def is_set(self) -> bool:
        return all(part.is_set() for part in self._parts)


class _Cancellable:
    """A flag another thread sets and a running call reads between its chunks."""

    _flag: _Flag

    def cancel(self) -> None:
        """Ask that this call is not scored (or stops between its batches)."""
        self._flag.set()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._flag.is_set()

    def check_cancelled(self) -> None:
        """Raise :class:`CallCancelled` if the call was cancelled (a run's check between batches)."""
        if self._flag.is_set():
            raise CallCancelled("the call was cancelled (its client left or its deadline passed) before it was scored")


@dataclass
class Call(_Cancellable):
    """One checked ``compute`` call: what the metric's hooks see.

    :meth:`Scorer.make_call <nlgscore.core.base.Scorer.make_call>` makes it; a metric reads it.
    Calls of one :attr:`merge_key` may be joined (:meth:`concat`) and scored as one.

    Args:
        predictions: the call's predictions, checked.
        needs: what this call scores with (the metric's ``needs``, or the call's for a metric
            whose inputs depend on it).
        references: per prediction, its references; None unless needed.
        sources: per prediction, its source; None unless needed.
        multiref: the rule that aggregates an item's references (``mean``, ``max`` ...).
        runtime: the call's run-time settings (the scorer's, with the call's overrides).
        options: the metric's own call options.
        progress: told the work done while items are scored (see :mod:`nlgscore.backend.progress`),
            after each batch; it raises :class:`CallCancelled` there once the call is cancelled.
        items: the call's items (a prediction with one reference, or its source).
        owner: per item, the prediction it belongs to.
        merges: whether the scorer's numbers for an item are the same in any call (see
            :attr:`merge_key`).
        context: the previous sentences each item reads (its items carry them).
        prepared: whether :meth:`Scorer.prepare <nlgscore.core.base.Scorer.prepare>` did the
            call's per-call work ahead of the run.
        state: what preparing made (the tokenized texts, idf).
        token_ids: content token ids of some of the call's texts, computed by the scorer's front
            tokenizer in another process (a server's HTTP worker), used in place of tokenizing.
    """

    predictions: List[str]
    needs: Tuple[str, ...]
    references: Optional[List[List[str]]]  # per prediction, its references
    sources: Optional[List[str]]  # per prediction, its source
    multiref: str
    runtime: Any = None
    options: Dict[str, Any] = field(default_factory=dict)
    progress: Any = None
    items: List[Item] = field(default_factory=list)
    owner: List[int] = field(default_factory=list)
    merges: bool = True
    context: int = 0  # previous sentences each item reads (its items carry them)
    _flag: _Flag = field(default_factory=_Flag, repr=False, compare=False)
    # What Scorer.prepare did ahead of run (tokenizing, idf), if it was called.
    prepared: bool = field(default=False, repr=False, compare=False)
    state: Any = field(default=None, repr=False, compare=False)
    # Content token ids of some of the call's texts, computed by the scorer's front tokenizer in
    # another process (a server's HTTP worker): the metric uses them in place of tokenizing.
    token_ids: Optional[Dict[str, List[int]]] = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        """Predictions in the call (what its Result holds)."""
        return len(self.predictions)

    @property
    def cost(self) -> int:
        """Estimated tokens of the call's items (every input a metric reads, per item)."""
        own = sum(
            estimate_tokens(i.prediction) + estimate_tokens(i.reference) + estimate_tokens(i.source) for i in self.items
        )
        return own + sum(
            estimate_tokens(text) for i in self.items if i.context is not None for side in i.context for text in side
        )

    @property
    def merge_key(self) -> Optional[Hashable]:
        """Calls with equal keys may be scored as one :meth:`concat` call with the same per-item
        numbers; None: this call merges with nothing (options without stable content too)."""
        options = content_key(self.options)
        if not self.merges or options is None:
            return None
        runtime = tuple(getattr(self.runtime, name, None) for name in CALL_RUNTIME_OPTIONS)
        return (self.needs, self.multiref, options, runtime, self.context)

    @classmethod
    def concat(cls, calls: Sequence["Call"]) -> "Call":
        """One call of ``calls``' items in order; its result splits back by
        ``[call.size for call in calls]``. It is cancelled once every one of ``calls`` is
        (cancelling it cancels them all).

        Args:
            calls: calls of one :attr:`merge_key` (not None), in the order their items are joined.

        Returns:
            The joined call (the one call itself when there is one).

        Raises:
            ValueError: no calls, or calls of different (or no) merge keys.
        """
        if not calls:
            raise ValueError("Call.concat needs at least one call")
        first = calls[0]
        if len(calls) == 1:
            return first
        key = first.merge_key
        if key is None or any(call.merge_key != key for call in calls[1:]):
            raise ValueError("Call.concat joins calls of one merge_key (not None)")
        owner: List[int] = []
        offset = 0
        for call in calls:
            owner.extend(o + offset for o in call.owner)
            offset += call.size
        return replace(
            first,
            predictions=[p for call in calls for p in call.predictions],
            references=None if first.references is None else [r for call in calls for r in call.references],  # type: ignore[union-attr]
            sources=None if first.sources is None else [s for call in calls for s in call.sources],  # type: ignore[union-attr]
            options=dict(first.options),
            progress=None,
            items=[item for call in calls for item in call.items],
            owner=owner,
            _flag=_AllFlag([call._flag for call in calls]),
            prepared=False,
            state=None,
            token_ids=_joined_token_ids(calls),
        )


def _joined_token_ids(calls: Sequence[Call]) -> Optional[Dict[str, List[int]]]:
    given = [call.token_ids for call in calls if call.token_ids]
    if not given:
        return None
    joined: Dict[str, List[int]] = {}
    for ids in given:
        joined.update(ids)  # one tokenizer: a text's ids are the same whichever call sent them
    return joined


@dataclass
class MatrixCall(_Cancellable):
    """One checked ``matrix`` call, made by
    :meth:`Scorer.make_matrix_call <nlgscore.core.base.Scorer.make_matrix_call>`. Never merged.

    Args:
        predictions: the distinct predictions (the matrix's rows before expansion).
        references: the distinct references.
        pred_of: per input prediction, its index among ``predictions``.
        ref_of: per input reference, its index among ``references``.
        source: the one source of every cell; None unless the metric scores with sources.
        column: the column asked for; None: the primary one.
        options: the call's options, as ``compute`` takes them.
    """

    predictions: List[str]
    references: List[str]
    pred_of: List[int]
    ref_of: List[int]
    source: Optional[str]
    column: Optional[str]
    options: Dict[str, Any] = field(default_factory=dict)
    _flag: _Flag = field(default_factory=_Flag, repr=False, compare=False)

    merge_key = None
    size = 1  # one answer: the matrix

    @property
    def cost(self) -> int:
        """Estimated tokens of every pair (what the scheduler budgets)."""
        return len(self.references) * sum(map(estimate_tokens, self.predictions)) + len(self.predictions) * sum(
            map(estimate_tokens, self.references)
        )
