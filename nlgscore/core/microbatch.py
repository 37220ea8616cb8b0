"""Many callers, one model: merge concurrent small ``compute`` calls into one.

The callers that score most (RL reward loops, inspect-ai scorers, a server's requests) score one
sample per call, from many coroutines or threads. A :class:`MicroBatcher` queues those calls and
a single worker thread scores them together: it waits at most ``max_wait_ms`` after the oldest
waiting call (or until ``max_batch`` predictions are waiting), merges the calls that share their
options into one :meth:`~nlgscore.core.base.Scorer.compute` (which batches by token budget
inside) and hands each caller its own slice of the :class:`~nlgscore.core.result.Result`.

* Each call is checked on its own when it is submitted (the errors of ``compute``, naming the
  argument), so a malformed call fails alone and never joins a batch. If a merged ``compute``
  still fails (a text the model cannot take, a non-finite score), the calls of that batch are
  scored separately, so only the bad one fails.
* Scores equal ``compute``'s on the same items up to float rounding (a batch's composition moves
  the last bits of an encoder output, as ``compute(batch_size=...)`` does). A metric whose numbers
  depend on the call's other items (BERTScore's per-call idf) is never merged: its calls run one
  by one on the worker.
* Threads use :meth:`MicroBatcher.submit` (a ``concurrent.futures.Future``) or
  :meth:`MicroBatcher.compute`; coroutines ``await`` :meth:`MicroBatcher.acompute`.
* A scorer that keeps embeddings (BERTScore with ``cache_references=True``) reuses them across
  batches: the G rollouts of a GRPO prompt share one reference, encoded once.

>>> from nlgscore.registry import build
>>> scorer = build("bertscore:minilm", num_layers=2)
>>> with MicroBatcher(scorer, max_batch=8, max_wait_ms=20) as batcher:
...     futures = [batcher.submit([p], ["It is cold today."]) for p in ("It is cold.", "Stocks fell.")]
...     merged = [f.result().scores[0] for f in futures]
>>> alone = scorer.compute(["It is cold.", "Stocks fell."], ["It is cold today."] * 2).scores
>>> [round(a - b, 6) for a, b in zip(merged, alone)], batcher.batches
([0.0, 0.0], 1)
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.core.batching import check_positive
from nlgscore.core.cache import content_key
from nlgscore.core.errors import ArgumentError, ArgumentTypeError, NlgscoreError
from nlgscore.core.inputs import check_references, check_same_length, check_texts

logger = logging.getLogger(__name__)

__all__ = ["MicroBatcher", "QueueFullError", "check_settings", "shared_batcher"]

# The defaults of scorer.acompute's batcher: gemmax's COMET service batched 32 items / 50 ms;
# 64 keeps a 2-core CPU busy and 5 ms adds little latency next to one forward pass.
DEFAULT_MAX_BATCH = 64
DEFAULT_MAX_WAIT_MS = 5.0
DEFAULT_MAX_QUEUE = 10_000


class QueueFullError(NlgscoreError, RuntimeError):
    """More predictions are waiting than ``max_queue`` allows: retry later (a server answers 503)."""


class _Call:
    """One submitted call: its checked inputs, the key of the calls it may merge with, its future."""

    __slots__ = ("predictions", "references", "sources", "options", "key", "future", "arrived")

    def __init__(self, predictions: List[str], references: Optional[List[List[str]]], sources: Optional[List[str]], options: Dict[str, Any], key: Any) -> None:
        self.predictions, self.references, self.sources, self.options, self.key = predictions, references, sources, options, key
        self.future: Future = Future()
        self.arrived = time.monotonic()

    def inputs(self) -> Dict[str, Any]:
        return {"references": self.references, "sources": self.sources}


class MicroBatcher:
    """Merge concurrent ``compute`` calls on ``scorer`` (see the module docstring).

    ``max_batch``: most predictions merged into one ``compute`` (a larger call runs alone);
    ``max_wait_ms``: how long the oldest waiting call waits for others (0: no waiting, merge
    only what is already queued); ``max_queue``: most predictions waiting, beyond which
    :meth:`submit` raises :class:`QueueFullError`; ``on_batch(predictions, calls, seconds)`` is
    called after each scored batch (for metrics such as Prometheus histograms).
    """

    def __init__(
        self,
        scorer: Any,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_wait_ms: float = DEFAULT_MAX_WAIT_MS,
        max_queue: int = DEFAULT_MAX_QUEUE,
        on_batch: Optional[Callable[[int, int, float], None]] = None,
    ) -> None:
        if not callable(getattr(scorer, "compute", None)):
            raise ArgumentTypeError(f"scorer must be a nlgscore scorer (with compute), got {type(scorer).__name__}")
        self.scorer = scorer
        self.max_batch, self.max_wait_ms, self.max_queue = check_settings(max_batch, max_wait_ms, max_queue)
        self.on_batch = on_batch
        self.batches = 0  # merged compute calls run (a lone call counts as one)
        # held while the worker scores: other work on the same scorer (a server's matrix calls) takes it too
        self.lock = threading.Lock()
        self._pending: Deque[_Call] = deque()
        self._queued = 0  # predictions waiting
        self._cond = threading.Condition()
        self._closing = False
        self._worker: Optional[threading.Thread] = None

    # -- submitting -------------------------------------------------------------------------
    def submit(self, predictions: Sequence[str], references: Optional[Sequence] = None, sources: Optional[Sequence[str]] = None, **call_options: Any) -> Future:
        """Queue one call; a ``Future`` of its :class:`~nlgscore.core.result.Result`.

        The call is checked now (an argument error is raised here, for this call only); a full
        queue raises :class:`QueueFullError`; a closed batcher raises RuntimeError.
        """
        call = self._check(predictions, references, sources, call_options)
        with self._cond:
            if self._closing:
                raise RuntimeError("this MicroBatcher is closed")
            if self._queued and self._queued + len(call.predictions) > self.max_queue:
                raise QueueFullError(f"{self._queued} predictions are waiting (max_queue={self.max_queue}); retry later")
            self._pending.append(call)
            self._queued += len(call.predictions)
            if self._worker is None:
                self._worker = threading.Thread(target=self._loop, name=f"nlgscore-microbatch-{self.scorer.name}", daemon=True)
                self._worker.start()
            self._cond.notify()
        return call.future

    async def acompute(self, predictions: Sequence[str], references: Optional[Sequence] = None, sources: Optional[Sequence[str]] = None, **call_options: Any) -> Any:
        """:meth:`submit`, awaited: the call's Result (cancelling it drops a call not yet scored)."""
        return await asyncio.wrap_future(self.submit(predictions, references, sources, **call_options))

    def compute(self, predictions: Sequence[str], references: Optional[Sequence] = None, sources: Optional[Sequence[str]] = None, **call_options: Any) -> Any:
        """:meth:`submit` and wait: the call's Result (for threads)."""
        return self.submit(predictions, references, sources, **call_options).result()

    @property
    def queued(self) -> int:
        """Predictions waiting to be scored (not counting the batch being scored)."""
        return self._queued

    def close(self, wait: bool = True) -> None:
        """Stop taking calls; the calls already queued are still scored (``wait``: until they are)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            worker = self._worker
        if wait and worker is not None and worker is not threading.current_thread():
            worker.join()

    def __enter__(self) -> "MicroBatcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check(self, predictions: Any, references: Any, sources: Any, options: Dict[str, Any]) -> _Call:
        """The argument checks of ``Scorer.compute`` on this call alone, and its merge key."""
        scorer = self.scorer
        needs = tuple(scorer._call_needs(references, sources, options))
        preds = check_texts("predictions", predictions)
        refs = srcs = None
        for need, given in (("references", references), ("sources", sources)):
            if need in needs and given is None:
                raise ArgumentError(f"{need} are required for this {scorer.name} call (got {need}=None)")
        if "references" in needs:
            refs = check_references("references", references, len(preds))
        if "sources" in needs:
            srcs = check_texts("sources", sources)
            check_same_length(predictions=preds, sources=srcs)
        options_key = content_key(options)
        merges = options_key is not None and scorer._merges_calls(options)
        key = (needs, options_key) if merges else object()  # a fresh object merges with nothing
        return _Call(preds, refs, srcs, dict(options), key)

    # -- the worker -------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                if not self._pending:
                    return  # closing, nothing left
                first = self._pending[0]
                deadline = first.arrived + self.max_wait_ms / 1000.0
                while not self._closing and self._waiting(first.key) < self.max_batch:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                batch = self._take(first.key)
            with self.lock:
                self._score(batch)

    def _waiting(self, key: Any) -> int:
        return sum(len(call.predictions) for call in self._pending if call.key is key or call.key == key)

    def _take(self, key: Any) -> List[_Call]:
        """The oldest calls of ``key``, up to ``max_batch`` predictions (the first one always)."""
        batch: List[_Call] = []
        size = 0
        kept: Deque[_Call] = deque()
        for call in self._pending:
            same = call.key is key or call.key == key
            if same and (not batch or size + len(call.predictions) <= self.max_batch):
                batch.append(call)
                size += len(call.predictions)
            else:
                kept.append(call)
        self._pending = kept
        self._queued -= size
        return [call for call in batch if call.future.set_running_or_notify_cancel()]  # a cancelled call is dropped

    def _score(self, batch: List[_Call]) -> None:
        if not batch:
            return
        start = time.perf_counter()
        self.batches += 1
        if len(batch) == 1:
            self._score_alone(batch[0])
        else:
            try:
                merged = self.scorer.compute(*_merge(batch), **batch[0].options)
            except Exception as err:  # some call of the batch is bad: score them apart, so only it fails
                logger.info("a merged batch of %d calls failed (%s: %s); scoring them separately", len(batch), type(err).__name__, err)
                for call in batch:
                    self._score_alone(call)
            else:
                for call, part in zip(batch, split_result(merged, [len(call.predictions) for call in batch])):
                    call.future.set_result(part)
        if self.on_batch is not None:
            self.on_batch(sum(len(call.predictions) for call in batch), len(batch), time.perf_counter() - start)

    def _score_alone(self, call: _Call) -> None:
        try:
            call.future.set_result(self.scorer.compute(call.predictions, **call.inputs(), **call.options))
        except BaseException as err:  # the caller gets its own error (KeyboardInterrupt included: never hang a caller)
            call.future.set_exception(err)


def check_settings(max_batch: Any, max_wait_ms: Any, max_queue: Any) -> Tuple[int, float, int]:
    """The batcher's settings, checked (errors name them); also for a server before its model loads.

    >>> check_settings(64, 5, 100)
    (64, 5.0, 100)
    """
    if isinstance(max_wait_ms, bool) or not isinstance(max_wait_ms, (int, float)) or not 0 <= max_wait_ms < float("inf"):
        raise ArgumentError(f"max_wait_ms must be a number >= 0, got {max_wait_ms!r}")
    return check_positive("max_batch", max_batch, allow_none=False), float(max_wait_ms), check_positive("max_queue", max_queue, allow_none=False)


def _merge(batch: List[_Call]) -> Tuple[List[str], Optional[List[List[str]]], Optional[List[str]]]:
    """The calls' predictions, references and sources, concatenated (None where not needed)."""
    predictions = [p for call in batch for p in call.predictions]
    references = None if batch[0].references is None else [r for call in batch for r in call.references]  # type: ignore[union-attr]
    sources = None if batch[0].sources is None else [s for call in batch for s in call.sources]  # type: ignore[union-attr]
    return predictions, references, sources


def split_result(result: Any, sizes: List[int]) -> List[Any]:
    """``result`` cut into consecutive results of ``sizes`` predictions, each of the same class
    and signature (per-item columns and per-prediction attributes sliced; the rest shared).

    >>> from nlgscore.core.result import Result
    >>> from nlgscore.core.signature import Signature
    >>> whole = Result(Signature("toy", _versions=False), {"s": [1.0, 2.0, 3.0]}, "s")
    >>> [part.scores for part in split_result(whole, [1, 2])]
    [[1.0], [2.0, 3.0]]
    """
    n = len(result)
    if sum(sizes) != n:
        raise ValueError(f"sizes add up to {sum(sizes)}, the result has {n} predictions")
    parts = []
    start = 0
    for size in sizes:
        span = slice(start, start + size)
        part = copy.copy(result)
        for name, value in vars(result).items():
            setattr(part, name, _slice(value, span, n))
        part._values = {name: column[..., span] for name, column in result._values.items()}
        parts.append(part)
        start += size
    return parts


def _slice(value: Any, span: slice, n: int) -> Any:
    """A per-prediction list or array (length ``n``) sliced, inside a tuple too; anything else as is."""
    if isinstance(value, (list, np.ndarray)) and len(value) == n:
        return value[span]
    if isinstance(value, tuple):  # e.g. BERTScore's (scorer, candidates, references) kept for plot()
        return tuple(_slice(v, span, n) for v in value)
    return value


_SHARED_LOCK = threading.Lock()


def shared_batcher(scorer: Any) -> MicroBatcher:
    """The batcher behind ``scorer.acompute``: one per scorer, made on first use with the defaults."""
    batcher = scorer.__dict__.get("_microbatcher")
    if batcher is None:
        with _SHARED_LOCK:
            batcher = scorer.__dict__.get("_microbatcher")
            if batcher is None:
                batcher = scorer.__dict__["_microbatcher"] = MicroBatcher(scorer)
    return batcher
