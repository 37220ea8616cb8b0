"""The template every scorer follows (in the spirit of sacreBLEU's ``Metric``).

A metric scores *items*: :class:`~nlgscore.core.inputs.Item` records of a prediction and the
inputs the metric uses (``reference``, ``source``; None where it uses none), as its ``needs``
declares: ``("references",)``, ``("sources",)`` or both. ``Scorer.compute(predictions,
references=None, sources=None)`` is ``run(make_call(...))``: two public steps, here.
:meth:`Scorer.make_call` (the front half) returns a checked :class:`~nlgscore.core.call.Call`:

1. argument checks of the inputs the call needs (errors name the argument and item,
   :mod:`nlgscore.core.inputs`);
2. one item per (prediction, reference), ragged references flattened (the prediction's source,
   if needed, rides along in each of its items), and whether the call may merge with others;

:meth:`Scorer.run` scores a Call (one from ``make_call``, or several joined by ``Call.concat``):

3. de-duplication of identical items (on every input the metric uses);
4. scoring the distinct items, with a progress bar counted in input items: in this process, or,
   where the call shards (``shard=True``, an ``accelerator``: every rank calls with the same
   inputs), split across the ranks and gathered in input order (:mod:`nlgscore.backend.distributed`);
5. aggregating each per-item column over a prediction's references with the metric's rule
   (:attr:`Scorer.multiref`: ``"max"`` for BERTScore, ``"mean"`` for Prism, ``"mean"|"max"`` for
   BARTScore);
6. building the :class:`~nlgscore.core.result.Result` and refusing a non-finite score.

A metric supplies small hooks: :meth:`Scorer._prepare` (optional per-call work on all the items,
e.g. tokenising or idf), :meth:`Scorer._score_items` (columns of a share of distinct items),
:meth:`Scorer._finish` (per-prediction columns → Result) and :meth:`Scorer._signature_fields`,
and names its :attr:`Scorer.columns` (an empty call returns them without any hook seeing zero
items; a metric whose columns depend on the call overrides :meth:`Scorer._empty_columns`);
a metric whose inputs depend on the call (Prism's ``mode``, BARTScore's ``direction``) says which
in :meth:`Scorer._call_needs`; one whose numbers depend on a call's other items sets
:attr:`Scorer.call_dependent` (its calls never merge). Every hook reads the call's run-time settings (``call.runtime``:
budget, batch size, progress), never the scorer's. Token-budget batching with OOM back-off lives
in :mod:`nlgscore.backend.batching`. :meth:`Scorer.matrix` scores every prediction against every
reference (a utility matrix) through the same template.

>>> import numpy as np
>>> class Overlap(Scorer):
...     name = "overlap"
...     columns = ("jaccard",)
...     def _score_items(self, items, state):
...         words = [(set(i.prediction.split()), set(i.reference.split())) for i in items]
...         return {"jaccard": np.array([len(p & r) / len(p | r) for p, r in words])}
...     def _finish(self, call, columns):
...         return Result(self.make_signature(call), columns, "jaccard")
...     def _signature_fields(self, call):
...         return {"tok": "space"}
>>> result = Overlap().compute(["a b", "c"], [["a b", "a"], "d"])
>>> result.scores, str(result.signature).split("|")[:3]
([0.75, 0.0], ['nlgscore:overlap', 'tok:space', 'multiref:mean'])
>>> Overlap().matrix(["a b", "c"], ["a", "c", "a b"]).tolist()  # every prediction against every reference
[[0.5, 0.0, 1.0], [0.0, 1.0, 0.0]]
>>> Overlap().compute([], []).columns()  # the empty call: the columns, no hook sees zero items
{'jaccard': []}
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple, Union, overload

import numpy as np

from nlgscore.backend.batching import unique
from nlgscore.backend.distributed import inputs_digest, shard
from nlgscore.backend.progress import ItemProgress
from nlgscore.core.batcher_hook import new_batcher
from nlgscore.core.call import Call, CallCancelled, MatrixCall
from nlgscore.core.context import check_context, item_contexts
from nlgscore.core.inputs import Item, check_references, check_same_length, check_text, check_texts, make_items
from nlgscore.core.options import metric_options
from nlgscore.core.result import Result, check_finite
from nlgscore.core.runtime import CALL_RUNTIME_OPTIONS, RUNTIME_OPTIONS
from nlgscore.core.scorer_runtime import ScorerRuntime, scorer_runtime
from nlgscore.core.signature import Signature
from nlgscore.errors import ArgumentError, ArgumentTypeError

MULTIREF_RULES = ("mean", "max")
INPUT_NAMES = ("predictions", "references", "sources")
NEEDS = INPUT_NAMES[1:]  # what a metric can score with, besides the predictions
# Pairs per chunk of a matrix call: a cancelled call (a client that left) stops between chunks.
MATRIX_CHUNK_PAIRS = 4096
_BATCHER_LOCK = threading.Lock()  # one batcher per scorer, however many callers ask first

__all__ = [
    "Call",
    "CallCancelled",
    "Item",
    "MatrixCall",
    "Scorer",
    "aggregate",
    "metric_options",
    "scorer_runtime",
    "MULTIREF_RULES",
    "NEEDS",
    "RUNTIME_OPTIONS",
]


def aggregate(values: np.ndarray, owner: Sequence[int], n: int, rule: str) -> np.ndarray:
    """Per-pair ``values`` (pairs first) → per-item values by ``rule`` over each item's pairs.

    >>> values = np.array([1.0, 3.0, 5.0])
    >>> aggregate(values, [0, 0, 1], 2, "mean").tolist(), aggregate(values, [0, 0, 1], 2, "max").tolist()
    ([2.0, 5.0], [3.0, 5.0])
    """
    if len(owner) == n:  # one value per item (every item has at least one): nothing to aggregate
        return np.asarray(values, dtype=np.float64)
    owner_arr = np.asarray(owner, dtype=np.int64)
    shape = (n,) + values.shape[1:]
    if rule == "max":
        out = np.full(shape, -np.inf)
        np.maximum.at(out, owner_arr, values)
        return out
    if rule != "mean":
        raise ArgumentError(f"multiref must be one of {', '.join(MULTIREF_RULES)}, got {rule!r}")
    out = np.zeros(shape)
    np.add.at(out, owner_arr, values)
    counts = np.bincount(owner_arr, minlength=n).reshape((n,) + (1,) * (values.ndim - 1))
    return out / np.maximum(counts, 1)


class Scorer(ScorerRuntime, ABC):
    """A loaded metric: ``compute(predictions, references=None, sources=None)`` → :class:`Result`.

    The template every metric fills in: the base checks and flattens the inputs, de-duplicates
    the items, batches and shards them and aggregates an item's references; a metric states what
    an item's columns are (``_score_items``), how they become a result (``_finish``) and what its
    signature records (``_signature_fields``). ``name`` is the metric's name in signatures and
    specs; ``needs`` the inputs it scores with (any of ``"references"`` and ``"sources"``: a
    COMET-style metric needs both); ``multiref`` the rule that turns per-reference columns into
    per-prediction ones. CONTRIBUTING.md's "Add a metric" writes one.

    Args:
        runtime: a ready :class:`~nlgscore.core.runtime.Runtime` (the given options override
            its settings); None: resolved from the options.
        **runtime_options: the run-time options every scorer takes (``device``, ``dtype``,
            ``batch_size``, ``max_tokens``, ``progress``, ``accelerator``, ``shard``), resolved
            before a model loads so that a bad one fails fast; any other keyword is an error
            naming it. A metric's constructor lists only its own options and forwards these.
    """

    name: ClassVar[str] = ""
    needs: Tuple[str, ...] = ("references",)
    multiref: ClassVar[str] = "mean"
    # The names of the columns _score_items returns (what an empty call returns; see _empty_columns).
    columns: ClassVar[Tuple[str, ...]] = ()
    # Capabilities, read by adapters instead of metric names: the scorer can keep text embeddings
    # across calls (cache_references=), and a pair's score comes from per-text embeddings, so
    # many items' utility matrices can share one encoding pass (MBR grouping).
    caches_embeddings: ClassVar[bool] = False
    pairs_from_embeddings: ClassVar[bool] = False
    # An item's score depends on the other items of its call (BERTScore's idf taken from each
    # call's references): a corpus cannot be scored window by window. A metric whose settings
    # decide it makes this a property.
    call_dependent: bool = False
    # One call gives the results of several values of a call option as columns (BARTScore:
    # direction="f" returns the precision and recall directions too): (option, the value to call
    # with, {value: column of that call}), or None.
    one_pass: ClassVar[Optional[Tuple[str, str, Dict[str, str]]]] = None
    # prepare() (tokenizing) may run on one thread while run() scores a prepared call on another:
    # scoring never touches what preparing does (the tokenizer). Read by the micro-batcher.
    prepares_apart: ClassVar[bool] = False
    _batcher: Any = None  # this scorer's own Call queue (batcher()), made on first use
    # The values of call options a call does not give (set_call_defaults: load(spec, prompt=...)).
    _call_defaults: Dict[str, Any] = {}
    # The metric reads items' document context (compute(..., context=k, doc_ids=...)).
    takes_context: ClassVar[bool] = False
    # Every option the metric takes (nlgscore.core.options.Option rows: constructor or call),
    # which every door reads; None: the constructor's parameters, none of them per call.
    option_table: ClassVar[Optional[Tuple[Any, ...]]] = None

    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        *,
        batch_size: Optional[int] = None,
        max_tokens: Optional[int] = None,
        progress: Optional[bool] = None,
        shard: Optional[bool] = None,
        context: Optional[int] = None,
        doc_ids: Optional[Sequence[Any]] = None,
    ) -> Result:
        """Score each prediction with the inputs the metric needs; results in input order:
        ``run(make_call(...))``.

        An option left as None takes the scorer's call default (:meth:`set_call_defaults`), else
        the metric's. The budgets never change a score beyond float rounding.

        Args:
            predictions: the texts scored (candidates, hypotheses).
            references: one reference per prediction, or several (``[[str]]``, ragged), for a
                metric that needs them; the ``multiref`` rule aggregates an item's references.
            sources: one source per prediction, for a metric that needs them.
            batch_size: the most items per batch for this call (None keeps the scorer's).
            max_tokens: the padded tokens per batch for this call.
            progress: draw a progress bar for this call.
            shard: split this call across the ranks of a launch (``torchrun``), every rank calling
                with the same inputs and getting every score (a rank with other inputs is a
                :class:`~nlgscore.backend.distributed.ShardError`); by default each process scores
                its own call whole.
            context: read each sentence after the previous ``context`` of its document
                (:mod:`nlgscore.core.context`), recorded in the signature as ``ctx:k``.
            doc_ids: one document id per prediction, with ``context``.

        Returns:
            The result: a column per score of the metric, ``scores`` the primary one.

        Raises:
            ArgumentError: an input the metric needs is missing, inputs of different lengths, or
                a value it does not allow; the message names the argument and the item.
            ArgumentTypeError: an input of the wrong type, or an option the metric does not take.
        """
        return self.run(
            self.make_call(
                predictions,
                references,
                sources,
                batch_size=batch_size,
                max_tokens=max_tokens,
                progress=progress,
                shard=shard,
                context=context,
                doc_ids=doc_ids,
            )
        )

    async def acompute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Result:
        """:meth:`compute` as a coroutine for many concurrent callers: calls from coroutines (and
        threads, through the same batcher's ``submit``) are merged into one ``run`` by the
        scorer's :meth:`batcher` (build a :class:`nlgscore.serve.MicroBatcher` for other settings);
        each call gets its own Result, a bad call fails alone; cancelling the coroutine cancels
        its call (a running one stops between its batches once every call of its run is
        cancelled). Scores equal :meth:`compute`'s up to float rounding.

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several, as for :meth:`compute`.
            sources: one source per prediction, as for :meth:`compute`.
            **call_options: :meth:`compute`'s keywords.

        Returns:
            This call's result.
        """
        return await self.batcher().acompute(predictions, references, sources, **call_options)

    def batcher(self) -> Any:
        """This scorer's own Call queue, behind :meth:`acompute` (threads ``submit`` to it): made on
        first use with the default settings, by the factory the scheduler registers
        (:mod:`nlgscore.core.batcher_hook`)."""
        with _BATCHER_LOCK:
            if self._batcher is None:
                self._batcher = new_batcher(self)
            return self._batcher

    # -- the template's front half: a checked Call ------------------------------------------
    def make_call(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> Call:
        """The checked form of ``compute(predictions, references, sources, **options)``: the
        inputs the call needs, checked (errors name the argument and item), its items, and
        whether it may be merged with other calls (:attr:`Call.merge_key`).

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several.
            sources: one source per prediction.
            **options: :meth:`compute`'s keywords (``batch_size``, ``max_tokens``, ``progress``,
                ``shard``, ``context``, ``doc_ids`` and the metric's call options).

        Returns:
            The call, for :meth:`run` (or :meth:`Call.concat` with others).

        Raises:
            ArgumentError: as :meth:`compute`; also an option that is a setting of the scorer.
            ArgumentTypeError: as :meth:`compute`.

        Example:
            >>> from nlgscore.registry import build
            >>> scorer = build("bertscore:minilm", num_layers=2)
            >>> call = scorer.make_call(["It is cold."], ["It is cold today."])
            >>> call.needs, call.size, scorer.run(call).scores == scorer.compute(["It is cold."], ["It is cold today."]).scores
            (('references',), 1, True)
        """
        options = self._with_call_defaults(options)
        runtime = self._call_runtime(**{name: options.pop(name, None) for name in CALL_RUNTIME_OPTIONS})
        context, doc_ids = options.pop("context", 0), options.pop("doc_ids", None)
        if options:
            from nlgscore.core.options import not_call_options

            raise not_call_options(type(self), sorted(options))
        return self._make_call(predictions, references, sources, runtime=runtime, context=context, doc_ids=doc_ids)

    @property
    def call_defaults(self) -> Dict[str, Any]:
        """The call options this scorer's calls get when they do not give them
        (:meth:`set_call_defaults`; empty by default)."""
        return dict(self._call_defaults)

    def set_call_defaults(self, **options: Any) -> "Scorer":
        """Make ``options`` the values of every call that does not give them; a call's own value wins.

        ``nlgscore.load(spec, prompt=...)`` and every door built on it set them here, so that a
        call option is accepted under the same name wherever the scorer is made.

        Args:
            **options: call options of this metric's option table (BARTScore's ``prompt``, the
                call's ``batch_size``); None leaves one unset.

        Returns:
            The scorer itself.

        Raises:
            ArgumentError: a setting of the scorer (``idf``), which is given when it is built.
            ArgumentTypeError: an option the metric does not take, or a value of the wrong type.

        Example:
            >>> from nlgscore.registry import build
            >>> scorer = build("chrf").set_call_defaults(batch_size=4)
            >>> scorer.call_defaults
            {'batch_size': 4}
        """
        from nlgscore.core.options import check_value, not_call_options, option_rows

        rows = {row.name: row for row in option_rows(type(self)) if row.call}
        refused = [name for name in options if name not in rows]
        if refused:
            raise not_call_options(type(self), refused)
        checked = {name: check_value(rows[name], value) for name, value in options.items() if value is not None}
        self._call_defaults = {**self._call_defaults, **checked}
        return self

    def _with_call_defaults(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """A call's options over the scorer's call defaults (an option given as None is unset)."""
        given = {name: value for name, value in options.items() if value is not None}
        return {**self._call_defaults, **given} if self._call_defaults else given

    def _make_call(
        self,
        predictions: Any,
        references: Any,
        sources: Any,
        names: Tuple[str, str, str] = INPUT_NAMES,
        multiref: Optional[str] = None,
        runtime: Any = None,
        context: Any = 0,
        doc_ids: Any = None,
        **options: Any,
    ) -> Call:
        """:meth:`make_call` with the metric's own call options (for a metric's ``make_call``)."""
        needs = self._call_needs(references, sources, options)
        if not needs or not set(needs) <= set(NEEDS):
            raise TypeError(f"{type(self).__name__}.needs must be a non-empty tuple of {NEEDS}, got {needs!r}")
        preds = check_texts(names[0], predictions)
        refs = srcs = None
        for need, given, name in zip(NEEDS, (references, sources), names[1:], strict=True):
            if need in needs and given is None:
                raise ArgumentError(f"{name} are required for this {self.name} call (got {name}=None)")
        if "references" in needs:
            refs = check_references(names[1], references, len(preds))
        if "sources" in needs:
            srcs = check_texts(names[2], sources)
            check_same_length(**{names[0]: preds, names[2]: srcs})
        rule = multiref or self.multiref
        if rule not in MULTIREF_RULES:
            raise ArgumentError(f"multi-reference aggregation must be one of {', '.join(MULTIREF_RULES)}, got {rule!r}")
        k, docs = check_context(context, doc_ids, len(preds))  # docs is a list whenever k > 0
        if k and not self.takes_context:
            raise ArgumentError(
                f"context={k}: {self.name} does not read document context (BERTScore, Prism and BARTScore do)"
            )
        items, owner = make_items(
            preds, refs, srcs, item_contexts(k, docs, preds, refs, srcs) if k and docs is not None else None
        )
        return Call(
            preds,
            tuple(needs),
            refs,
            srcs,
            rule,
            runtime if runtime is not None else self._call_runtime(),
            options,
            items=items,
            owner=owner,
            merges=not self.call_dependent,
            context=k,
        )

    def make_matrix_call(
        self,
        predictions: Sequence[str],
        references: Sequence[str],
        *,
        source: Optional[str] = None,
        column: Optional[str] = None,
        **call_options: Any,
    ) -> MatrixCall:
        """The checked form of :meth:`matrix` (what :meth:`run` turns into the matrix).

        Args:
            predictions: the rows' texts.
            references: the columns' texts.
            source: the one source of every cell, for a metric that scores with references and
                sources.
            column: the column the cells hold; None: the primary one.
            **call_options: :meth:`compute`'s keywords.

        Returns:
            The call: the distinct texts of both sides and where each input's row and column come from.

        Raises:
            ArgumentError: a metric that scores with sources only, or a ``source`` given where it
                cannot be used (or missing where it is needed).
            ArgumentTypeError: texts or ``column`` of the wrong type.
        """
        preds = check_texts("predictions", predictions)
        refs = check_texts("references", references)
        if column is not None and not isinstance(column, str):
            raise ArgumentTypeError(f"column must be a column name (str) or None, got {type(column).__name__}")
        source = None if source is None else check_text("source", source)
        # Asked as compute() is asked without sources: a metric that scores with sources says so
        # itself (a Prism with no mode must not switch to QE).
        needs = self._call_needs(refs, None, call_options)
        if "references" not in needs:
            raise ArgumentError(
                f"matrix scores predictions against references, but this {self.name} call scores with sources only; "
                "to rank predictions by their source, use compute(predictions, sources=...)"
            )
        if ("sources" in needs) != (source is not None):
            raise ArgumentError(
                f"source is required: this {self.name} call scores with references and sources (pass source=TEXT)"
                if source is None
                else f"source must be None: this {self.name} call scores with references only, got source={source!r}"
            )
        up, pred_of = unique(preds)
        ur, ref_of = unique(refs)
        return MatrixCall(up, ur, pred_of, ref_of, source, column, dict(call_options))

    def matrix(
        self,
        predictions: Sequence[str],
        references: Sequence[str],
        *,
        source: Optional[str] = None,
        column: Optional[str] = None,
        **call_options: Any,
    ) -> np.ndarray:
        """The score of every ``(predictions[i], references[j])`` pair: an array of shape
        ``(len(predictions), len(references))`` (a utility matrix for MBR decoding, reranking
        or consensus), equal to :meth:`compute` over all pairs: ``run(make_matrix_call(...))``.

        ``source``: for a metric that scores with references *and* sources (COMET-style), the one
        source of every cell (MBR: an item's candidates under its source); required there, and
        refused (an error naming it, never silently ignored) by a metric that cannot use it. A
        source-only metric's QE reranking is ``compute(predictions, sources=...)``. Each distinct
        pair is scored once and each distinct text encoded once.

        Args:
            predictions: the rows' texts (MBR: an item's candidates).
            references: the columns' texts (MBR: its pseudo-references).
            source: the one source of every cell, for a metric that scores with references and sources.
            column: another column than the primary one (``"precision"``).
            **call_options: :meth:`compute`'s keywords.

        Returns:
            The matrix, ``(len(predictions), len(references))``, float64.

        Raises:
            ArgumentError: as :meth:`make_matrix_call`, or a ``column`` the metric does not give.
        """
        return self.run(self.make_matrix_call(predictions, references, source=source, column=column, **call_options))

    # -- the template's back half: run a checked Call ----------------------------------------
    @overload
    def run(self, call: Call) -> Result: ...

    @overload
    def run(self, call: MatrixCall) -> np.ndarray: ...

    def run(self, call: Union[Call, MatrixCall]) -> Union[Result, np.ndarray]:
        """Score a checked call: its Result; a :class:`MatrixCall` gives its matrix, scored in
        chunks of rows, between which a cancelled call stops (:class:`CallCancelled`).

        Args:
            call: a call of :meth:`make_call` (or :meth:`Call.concat` of several), or of
                :meth:`make_matrix_call`.

        Returns:
            The call's result, or the matrix of a matrix call.

        Raises:
            CallCancelled: the call was cancelled.
            NonFiniteScoreError: the metric produced NaN or infinity for non-empty input.
        """
        if isinstance(call, MatrixCall):
            return self._run_matrix(call)
        call.check_cancelled()
        preds = call.predictions
        if not preds:  # the empty call (TRL's probe, an empty file): no hook sees zero items
            return self._finish(call, self._empty_columns(call))
        items, owner = call.items, call.owner
        distinct, inverse = unique(items)
        # What the progress bar counts: predictions (input lines), a prediction's references sharing it.
        owner_arr, inverse_arr = np.asarray(owner, dtype=np.int64), np.asarray(inverse, dtype=np.int64)
        share_of_line = 1.0 / np.bincount(owner_arr, minlength=len(preds))[owner_arr]
        columns_of_distinct = self._score_distinct(
            call, distinct, np.bincount(inverse_arr, share_of_line, minlength=len(distinct))
        )
        per_item = {name: values[inverse_arr] for name, values in columns_of_distinct.items()}
        columns = {name: aggregate(values, owner, len(preds), call.multiref) for name, values in per_item.items()}
        return check_finite(self._finish(call, columns), self.name)

    def prepare(self, call: Call) -> Call:
        """The call's per-call work before scoring (the metric's tokenizing, idf), done now and
        kept on the call, so that :meth:`run` skips it: a scheduler prepares the next call on
        another thread while the model runs the current one, where :attr:`prepares_apart` says
        that is safe.

        Args:
            call: a call of :meth:`make_call`; one already prepared is left as it is.

        Returns:
            ``call``, prepared.
        """
        if not call.prepared and call.predictions:
            call.state, call.prepared = self._prepare(call, call.items), True
        return call

    def front_tokenizer(self) -> Optional[Dict[str, Any]]:
        """What another process needs to tokenize this scorer's texts as it does (for
        :attr:`Call.token_ids`: a server's HTTP workers tokenize their requests), or None where
        the metric tokenizes only in its own process (the default). BERTScore gives its fast
        tokenizer's JSON (:class:`nlgscore.backend.text_tokens.FrontTokenizer` reads it).

        >>> from nlgscore.registry import build
        >>> build("chrf").front_tokenizer() is None
        True
        """
        return None

    def _run(
        self,
        predictions: Any,
        references: Any,
        sources: Any,
        names: Tuple[str, str, str] = INPUT_NAMES,
        multiref: Optional[str] = None,
        runtime: Any = None,
        **options: Any,
    ) -> Result:
        """``run(_make_call(...))``: a metric's own entry points (bert_score's ``score``) with their
        argument names, and the scorer's call defaults as :meth:`make_call` has them."""
        options = self._with_call_defaults(options)
        overrides = {name: options.pop(name) for name in CALL_RUNTIME_OPTIONS if name in options}
        if runtime is None and overrides:
            runtime = self._call_runtime(**overrides)
        return self.run(self._make_call(predictions, references, sources, names, multiref, runtime, **options))

    def _run_matrix(self, call: MatrixCall) -> np.ndarray:
        up, ur = call.predictions, call.references
        if not up or not ur:  # no pair: the empty product still checks the column
            return self._matrix_rows(call, up).reshape(len(call.pred_of), len(call.ref_of))
        step = max(1, MATRIX_CHUNK_PAIRS // len(ur))
        rows = []
        for start in range(0, len(up), step):
            call.check_cancelled()
            rows.append(self._matrix_rows(call, up[start : start + step]))
        grid = np.concatenate(rows)
        return grid[np.ix_(call.pred_of, call.ref_of)]

    def _matrix_rows(self, call: MatrixCall, up: List[str]) -> np.ndarray:
        """The matrix rows of the distinct predictions ``up`` against every distinct reference."""
        ur, column = call.references, call.column
        fast = self._matrix_columns(up, ur, call.options, call.source) if up and ur else None
        values: Dict[str, Any]
        if fast is not None:
            values, primary, layer = fast[0], fast[1], None
        else:
            sources = None if call.source is None else [call.source] * (len(up) * len(ur))
            result = self.run(
                self.make_call([p for p in up for _ in ur], [r for _ in up for r in ur], sources, **call.options)
            )
            values, primary, layer = result.columns(), result.primary, getattr(result, "layer", None)
        name = primary if column is None else column
        if name not in values:
            raise ArgumentError(f"column must be one of {', '.join(values)} for this {self.name} call, got {column!r}")
        grid = np.asarray(values[name], dtype=np.float64)
        if fast is None and grid.ndim == 2:  # one row per layer (BERTScore all_layers): the result's layer
            grid = grid[layer if layer is not None else -1]
        return grid.reshape(len(up), len(ur))

    def _matrix_columns(
        self, predictions: List[str], references: List[str], call_options: Dict[str, Any], source: Optional[str] = None
    ) -> Optional[Tuple[Dict[str, np.ndarray], str]]:
        """Optional fast path of :meth:`matrix` for distinct, checked, non-empty texts (and the
        call's one ``source``, None unless the metric scores with sources): every column as a
        ``(len(predictions), len(references))`` array and the primary column's name, or None to
        score the product through :meth:`run` (the default)."""
        return None

    @property
    def signature(self) -> Signature:
        """Settings of this scorer that change a number."""
        return self.make_signature(None)

    def make_signature(self, call: Optional[Call]) -> Signature:
        """The signature of ``call``: the metric's fields, then the multi-reference rule for
        reference-based scores.

        Args:
            call: the call whose settings are recorded; None: the scorer's defaults.

        Returns:
            The signature.
        """
        fields = self._signature_fields(call)
        if call is not None and call.context:
            fields["ctx"] = call.context
        if "references" in (call.needs if call is not None else self.needs):
            fields["multiref"] = call.multiref if call is not None else self.multiref
        return Signature(self.name, **fields)

    # -- hooks of the front half --------------------------------------------------------------
    def _call_needs(self, references: Any, sources: Any, options: Dict[str, Any]) -> Tuple[str, ...]:
        """The inputs this call scores with (default: :attr:`needs`); a metric whose inputs depend
        on the call (a mode, a direction, which input is given) overrides this one hook."""
        return tuple(self.needs)

    def _call_runtime(self, **overrides: Any) -> Any:
        """The scorer's run-time settings with this call's overrides (:data:`CALL_RUNTIME_OPTIONS`;
        None keeps a setting)."""
        return self.runtime.replace(**overrides)

    def _score_distinct(self, call: Call, distinct: List[Item], weight: np.ndarray) -> Dict[str, np.ndarray]:
        """Columns of the ``distinct`` items, prepared and scored here, or, in a sharded call, this
        rank's share prepared and scored (a failure reaches every rank) and all gathered in order.
        ``weight[i]`` input predictions stand behind distinct item ``i`` (what the progress bar counts)."""

        def run(indices: List[int]) -> Dict[str, np.ndarray]:
            state = self.prepare(call).state
            call.progress = ItemProgress(
                int(round(weight[indices].sum())), bool(call.runtime.progress), self.name, call.check_cancelled
            )
            try:
                columns = self._score_items([distinct[i] for i in indices], state)
            finally:
                call.progress.close()
            return {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}

        scored: List[Tuple[int, Dict[str, np.ndarray]]] = []

        def share(indices: List[int]) -> List[Dict[str, Any]]:
            scored.append((len(indices), run(indices)))
            columns = scored[-1][1]
            return [
                dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)
            ]  # one row per item, for the gather

        runtime = call.runtime
        digest = self._inputs_digest(call, distinct) if runtime.shards else ""
        rows = shard(len(distinct), share, runtime.accelerator, digest, enabled=runtime.shards)
        if len(scored) == 1 and scored[0][0] == len(distinct):  # this process scored them all
            return scored[0][1]
        template = scored[0][1] if scored else self._empty_columns(call)  # column names and trailing shapes
        return {name: np.stack([row[name] for row in rows]) if rows else values for name, values in template.items()}

    def _inputs_digest(self, call: Call, distinct: List[Item]) -> str:
        """What the ranks of a sharded call compare: the metric, the call's settings and its
        distinct items (every input the metric reads, document context included)."""
        settings = (self.name, call.needs, call.multiref, call.context, repr(sorted(call.options.items())))
        return inputs_digest([settings, *distinct])

    # -- hooks ----------------------------------------------------------------------------
    def _empty_columns(self, call: Call) -> Dict[str, np.ndarray]:
        """The columns of no items, as :meth:`_score_items` shapes them (zero rows), for the empty
        call and a process whose share is empty, so that :meth:`_prepare` and
        :meth:`_score_items` never see zero items. Default: an empty array per name of
        :attr:`columns`; a metric whose columns depend on the call (a mode, a direction, layers)
        overrides this."""
        if not self.columns:
            raise TypeError(
                f"{type(self).__name__} must declare its columns (columns = ('name', ...)) or override _empty_columns"
            )
        return {name: np.zeros(0) for name in self.columns}

    def _prepare(self, call: Call, items: List[Item]) -> Any:
        """Per-call work on all the call's items (duplicates included) before scoring; what it
        returns is the ``state`` of :meth:`_score_items` (default: the call itself)."""
        return call

    @abstractmethod
    def _score_items(self, items: List[Item], state: Any) -> Dict[str, np.ndarray]:
        """Columns for distinct ``items`` (never none: see :meth:`_empty_columns`): arrays with items first."""

    @abstractmethod
    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        """Per-prediction columns (aggregated over references) → the metric's Result."""

    @abstractmethod
    def _signature_fields(self, call: Optional[Call]) -> Dict[str, Any]:
        """The metric's signature fields for ``call`` (None: the scorer's defaults)."""

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_batcher", None)  # acompute's worker thread and queue do not travel: a copy makes its own
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.signature})"
