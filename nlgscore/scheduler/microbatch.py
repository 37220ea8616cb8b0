"""Many callers, one model: a queue of checked calls, scored together by token budget.

The callers that score most (RL reward loops, inspect-ai scorers, a server's requests) score one
sample per call, from many coroutines or threads. A :class:`MicroBatcher` queues their checked
:class:`~nlgscore.core.call.Call` objects (``scorer.make_call``: each request is checked once,
when it is submitted) and one worker thread scores them: ``Call.concat(calls)`` → one
``scorer.run`` → ``Result.split(sizes)``, each caller its own part. It reads nothing of the
scorer but ``make_call``, ``run`` and ``name``.

The schedule (after TEI's ``core/src/queue.rs`` and Infinity's ``batch_handler.py``):

* a batch holds calls of one :attr:`~nlgscore.core.call.Call.merge_key` up to a token budget
  (``max_tokens``, by default 4 of the metric's own forward batches, ``4 * scorer.max_tokens``; calls counted by
  :attr:`~nlgscore.core.call.Call.cost`) and at most ``max_batch`` predictions;
* the oldest call always goes first (no starvation: every call's wait is bounded by the calls
  ahead of it); its batch mates are the calls of the nearest length among the next ``window``
  queued calls (less padding);
* an idle worker takes what is queued at once; calls that arrive while the model runs, or just
  after a run (its callers coming back: ``RETURN_WINDOW_S``), gather until it
  is done (or a run's worth is waiting), then wait at most ``max_wait_ms`` more for mates, and
  not at all once as many predictions wait as the last run answered;
* where the metric allows (``scorer.prepares_apart``: BERTScore), the next batch is prepared
  (``scorer.prepare``: tokenized) on the feeder thread while a model thread runs the current one,
  one batch ahead at most;
* a call whose future was cancelled (its client left), whose :meth:`Call.cancel` was called or
  whose ``deadline`` passed is dropped before it is scored; a running call stops between its
  batches once cancelled (a matrix call between its chunks). A merged run stops only once every
  call in it is cancelled: the others' answers are never cut short by one caller leaving, and a
  call cancelled during a run that goes on gets :class:`CallCancelled`, not its part.

Failures stay with their call: a merged run that fails is re-run call by call, so only the bad
call fails; an ``on_batch`` callback that raises is logged, never kills the worker. Scores equal
``compute``'s on the same items up to float rounding (a batch's composition moves the last bits
of an encoder output, as ``compute(batch_size=...)`` does). A metric whose numbers depend on the
call's other items (BERTScore's per-call idf) never merges: its calls run one by one.

The public API: :meth:`MicroBatcher.submit` (a ``concurrent.futures.Future``),
:meth:`~MicroBatcher.compute` (threads), :meth:`~MicroBatcher.acompute` (coroutines),
:meth:`~MicroBatcher.submit_call` (an already checked ``Call``/``MatrixCall``, e.g. a server's),
:meth:`~MicroBatcher.run_call` (a coroutine: submit, await with a timeout, cancel on timeout or
as soon as ``disconnected()`` returns: the client left), :attr:`~MicroBatcher.queued`,
:attr:`~MicroBatcher.batches`, :attr:`~MicroBatcher.dropped`, :meth:`~MicroBatcher.close`.

>>> from nlgscore.registry import build
>>> scorer = build("bertscore:minilm", num_layers=2)
>>> with MicroBatcher(scorer, max_batch=8, max_wait_ms=20) as batcher:
...     futures = [batcher.submit([p], ["It is cold today."]) for p in ("It is cold.", "Stocks fell.")]
...     merged = [f.result().scores[0] for f in futures]
>>> alone = scorer.compute(["It is cold.", "Stocks fell."], ["It is cold today."] * 2).scores
>>> [round(a - b, 6) for a, b in zip(merged, alone)]
[0.0, 0.0]
"""

from __future__ import annotations

import asyncio
import logging
import math
import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple

from nlgscore.backend.batching import DEFAULT_MAX_TOKENS, check_positive
from nlgscore.core.call import Call, CallCancelled
from nlgscore.errors import ArgumentError, ArgumentTypeError, NlgscoreError
from nlgscore.scheduler.answer_wait import wait_for_answer
from nlgscore.scheduler.loop_relay import relay
from nlgscore.scheduler.queued_call import QueuedCall

logger = logging.getLogger(__name__)

__all__ = ["MicroBatcher", "QueueFullError", "QueuedCall", "check_settings", "shared_batcher"]

# The defaults of scorer.acompute's batcher. max_batch caps predictions per run on top of the
# token budget; 5 ms (Infinity's wait) adds little latency next to one forward pass.
DEFAULT_MAX_BATCH = 256
DEFAULT_MAX_WAIT_MS = 5.0
DEFAULT_MAX_QUEUE = 10_000
# A run holds up to this many of the metric's own forward batches (its max_tokens): the per-run
# work (de-duplication, idf, the Result) is amortised. Measured (BENCHMARKS.md "Serving"): 512
# items in runs of 32 at 0.86-0.89x of one call, in runs of 64 at 0.99-1.03x.
FORWARDS_PER_RUN = 4
# Queued calls searched for length-matched batch mates (Infinity sorts 8 batches' worth): 4 runs of
# max_batch. At 64 a run of single-item calls never held more than 64 pairs, a third of its
# token budget (256 WMT clients: runs of 64 where 150 fit).
DEFAULT_WINDOW = 4 * DEFAULT_MAX_BATCH
# After a run, its callers count as coming back for this long while fewer wait than it answered:
# over HTTP 64 answers leave one by one (~30 ms on 2 cores), and a caller back later than max_wait_ms
# ran alone (~12 one-call runs per 512 requests, 8% of the model's time).
RETURN_WINDOW_S = 0.05


class QueueFullError(NlgscoreError, RuntimeError):
    """More predictions are waiting than ``max_queue`` allows: retry later (a server answers 503)."""


class MicroBatcher:
    """Queue checked calls on ``scorer`` and score them together (see the module docstring).

    Args:
        scorer: the scorer the calls run on; the batcher reads only its ``make_call``, ``run``
            and ``name``.
        max_batch: the most predictions in one run; a larger call runs alone.
        max_wait_ms: how long, in milliseconds, a call that arrived while the worker was busy waits
            for batch mates (0: not at all); an idle worker takes a call at once.
        max_queue: the most predictions waiting; beyond it `submit` raises `QueueFullError` (a
            server answers 503).
        max_tokens: the token budget of one run, counted by each call's cost (None: 4 of the
            scorer's forward batches, ``4 * scorer.max_tokens``).
        window: the queued calls searched for batch mates of the nearest length (less padding).
        on_batch: called as ``on_batch(predictions, calls, seconds)`` after each scored run (for
            metrics such as Prometheus histograms); an exception it raises is logged, never stops
            the worker.

    Raises:
        ArgumentError: a setting out of range (``max_batch``, ``max_queue``, ``max_tokens`` and
            ``window`` are integers >= 1, ``max_wait_ms`` a number >= 0).
        ArgumentTypeError: ``scorer`` is not a nlgscore scorer, or ``on_batch`` is not callable.

    Example:
        >>> from nlgscore.registry import build
        >>> scorer = build("chrf")
        >>> with MicroBatcher(scorer, max_batch=8) as batcher:
        ...     batched = batcher.compute(["It is cold."], ["It is cold today."]).scores
        >>> batched == scorer.compute(["It is cold."], ["It is cold today."]).scores
        True
    """

    def __init__(
        self,
        scorer: Any,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_wait_ms: float = DEFAULT_MAX_WAIT_MS,
        max_queue: int = DEFAULT_MAX_QUEUE,
        max_tokens: Optional[int] = None,
        window: int = DEFAULT_WINDOW,
        on_batch: Optional[Callable[[int, int, float], None]] = None,
    ) -> None:
        if not callable(getattr(scorer, "make_call", None)) or not callable(getattr(scorer, "run", None)):
            raise ArgumentTypeError(
                f"scorer must be a nlgscore scorer (with make_call and run), got {type(scorer).__name__}"
            )
        self.scorer = scorer
        self.max_batch, self.max_wait_ms, self.max_queue = check_settings(max_batch, max_wait_ms, max_queue)
        if max_tokens is None:
            max_tokens = FORWARDS_PER_RUN * (getattr(scorer, "max_tokens", None) or DEFAULT_MAX_TOKENS)
        self.max_tokens = check_positive("max_tokens", max_tokens, allow_none=False)
        self.window = check_positive("window", window, allow_none=False)
        if on_batch is not None and not callable(on_batch):
            raise ArgumentTypeError(f"on_batch must be callable or None, got {type(on_batch).__name__}")
        self.on_batch = on_batch
        self.batches = 0  # runs (a lone call counts as one)
        self.dropped = {"deadline": 0, "cancelled": 0}  # calls dropped unscored, by why (a server's /metrics)
        self._scoring = threading.Lock()  # one run at a time on the scorer
        self._pending: List[QueuedCall] = []
        self._queued = 0  # predictions waiting
        self._cond = threading.Condition()
        self._closing = False
        self._inflight = 0  # batches handed to the model thread and not yet scored (prepared apart)
        self._last_end = -math.inf  # when its last run ended (time.monotonic())
        self._last_size = 0  # predictions in the last run (its callers, if closed-loop, come back as many)
        self._worker: Optional[threading.Thread] = None  # forms batches (and prepares them)
        self._model: Optional[threading.Thread] = None  # runs them, where the metric is prepared apart
        self._handoff: Optional["queue.Queue[Any]"] = None

    # -- submitting -------------------------------------------------------------------------
    def submit(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Future:
        """Check one call now and queue it.

        The call is checked by ``scorer.make_call`` before it is queued, so an argument error is raised
        here, for this call only.

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several, for a metric that needs them.
            sources: one source per prediction, for a metric that needs them.
            **call_options: the call's options, as ``compute`` takes them (``batch_size``,
                ``max_tokens``, ...).

        Returns:
            A ``concurrent.futures.Future`` of the call's Result.

        Raises:
            ArgumentError: as ``compute``, for this call.
            ArgumentTypeError: as ``compute``, for this call.
            QueueFullError: ``max_queue`` predictions are already waiting.
            RuntimeError: the batcher is closed.
        """
        return self.submit_call(self.scorer.make_call(predictions, references, sources, **call_options))

    def submit_call(self, call: Any, deadline: Optional[float] = None) -> Future:
        """Queue a call that is already checked.

        Args:
            call: a ``scorer.make_call`` call, or a ``make_matrix_call`` one (its answer is then the
                matrix).
            deadline: a ``time.monotonic()`` time after which the call is dropped unscored and its
                future fails with TimeoutError (None: no deadline).

        Returns:
            A ``concurrent.futures.Future`` of the call's answer.

        Raises:
            QueueFullError: the call would take the waiting predictions past ``max_queue``.
            RuntimeError: the batcher is closed.
        """
        job = QueuedCall(call, deadline)
        with self._cond:
            if self._closing:
                raise RuntimeError("this MicroBatcher is closed")
            if self._queued and self._queued + job.size > self.max_queue:
                raise QueueFullError(
                    f"{self._queued} predictions are waiting (max_queue={self.max_queue}); retry later"
                )
            self._pending.append(job)
            self._queued += job.size
            if self._worker is None:
                self._start()
            self._cond.notify()
        return job.future

    async def run_call(
        self,
        call: Any,
        timeout: Optional[float] = None,
        disconnected: Optional[Callable[[], Awaitable[Any]]] = None,
        watch: Optional[Callable[[Future], None]] = None,
        stop: Optional["asyncio.Future[Any]"] = None,
    ) -> Any:
        """Submit a checked call and await its answer (a Result, or a matrix).

        Args:
            call: a checked call, as `submit_call` takes it.
            timeout: seconds to wait; past them the call is cancelled (dropped if queued, stopped
                between its batches if running) and TimeoutError raised (None: no limit).
            disconnected: a coroutine function that returns once the client has left (a server's
                ``until_disconnected``); it is awaited beside the call, and if it returns first the call
                is cancelled at once and ``CallCancelled`` raised (if it fails instead, the call goes on
                unwatched).
            watch: handed the queued call's future as soon as it is queued (a server times its wait
                with it).
            stop: a future shared by every waiter; once it is done the call is cancelled too (a
                drain's cut).

        Returns:
            The call's answer.

        Raises:
            TimeoutError: ``timeout`` passed before the answer.
            CallCancelled: the client left, or ``stop`` was done, before the answer.
            QueueFullError: as `submit_call`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        queued = self.submit_call(call, deadline)
        if watch is not None:
            watch(queued)
        return await wait_for_answer(queued, call, deadline, disconnected, stop)

    async def acompute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Any:
        """`submit`, awaited: the call's Result.

        Cancelling the awaiting coroutine cancels the call: one not yet scored is dropped, a running
        one stops between its batches (a merged run once every call in it is cancelled).

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several, for a metric that needs them.
            sources: one source per prediction, for a metric that needs them.
            **call_options: the call's options, as ``compute`` takes them.

        Returns:
            The call's Result.

        Raises:
            ArgumentError: as ``compute``, before anything is queued.
            QueueFullError: as `submit`.
        """
        call = self.scorer.make_call(predictions, references, sources, **call_options)
        waiter = relay(self.submit_call(call))
        waiter.add_done_callback(lambda done: call.cancel() if done.cancelled() else None)
        return await waiter

    def compute(
        self,
        predictions: Sequence[str],
        references: Optional[Sequence] = None,
        sources: Optional[Sequence[str]] = None,
        **call_options: Any,
    ) -> Any:
        """`submit` and wait: the call's Result (for threads).

        Args:
            predictions: the texts scored.
            references: one reference per prediction, or several, for a metric that needs them.
            sources: one source per prediction, for a metric that needs them.
            **call_options: the call's options, as ``compute`` takes them.

        Returns:
            The call's Result, its scores those of ``scorer.compute`` on the same items up to float
            rounding.

        Raises:
            ArgumentError: as ``compute``, before anything is queued.
            QueueFullError: as `submit`.
        """
        return self.submit(predictions, references, sources, **call_options).result()

    @property
    def queued(self) -> int:
        """Predictions waiting to be scored (not counting the batch being scored)."""
        return self._queued

    @property
    def running(self) -> bool:
        """Whether a thread of this batcher is still alive (after :meth:`close`: a run not yet done)."""
        return any(thread is not None and thread.is_alive() for thread in (self._worker, self._model))

    def close(self, wait: bool = True) -> None:
        """Stop taking calls; the calls already queued are still scored.

        Args:
            wait: return only once they are scored and the batcher's threads have ended.
        """
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            worker = self._worker
        for thread in (worker, self._model):
            if wait and thread is not None and thread is not threading.current_thread():
                thread.join()

    def __enter__(self) -> "MicroBatcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the worker -------------------------------------------------------------------------
    def _start(self) -> None:
        """The feeder thread (forms and prepares batches), and a model thread where the metric
        may be prepared apart (then the next batch is tokenized while the model runs)."""
        name = f"nlgscore-microbatch-{self.scorer.name}"
        if getattr(self.scorer, "prepares_apart", False):
            self._handoff = queue.Queue(maxsize=1)  # one batch prepared ahead, no more
            self._model = threading.Thread(target=self._model_loop, name=f"{name}-model", daemon=True)
            self._model.start()
        self._worker = threading.Thread(target=self._feed, name=name, daemon=True)
        self._worker.start()

    def _feed(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._pending and not self._closing:
                        self._cond.wait()
                    if not self._pending:
                        return  # closing, nothing left
                    self._wait_for_mates(self._pending[0])
                    batch = self._take()
                if not batch:
                    continue
                call = self._prepared(batch)
                if self._handoff is None:
                    with self._scoring:
                        self._score(batch, call)
                else:
                    with self._cond:
                        self._inflight += 1
                    self._handoff.put((batch, call))
        finally:
            if self._handoff is not None:
                self._handoff.put(None)

    def _model_loop(self) -> None:
        while True:
            work = self._handoff.get()  # type: ignore[union-attr]
            if work is None:
                return
            try:
                with self._scoring:
                    self._score(*work)
            finally:
                with self._cond:
                    self._inflight -= 1
                    self._cond.notify_all()

    def _wait_for_mates(self, first: QueuedCall) -> None:
        """Under ``_cond``: until a run's worth of calls waits, or the model is free. While it runs
        (or has a batch waiting), calls gather; once it is free, a call that came while it was busy,
        within ``max_wait_ms`` of its last run's end, or within :data:`RETURN_WINDOW_S` while fewer
        wait than that run answered, waits at most ``max_wait_ms`` more and only until that many
        wait (closed-loop callers fill one batch, not two halves); one that found it idle, not at all."""
        while not self._closing and not self._full(first):
            if self._inflight:  # counted before the handoff: no gap between the model's get and its run
                self._cond.wait()  # the model thread notifies when it is done
                continue
            wait = self.max_wait_ms / 1000.0
            remaining = max(first.arrived, self._last_end) + wait - time.monotonic()
            # A call that came more than max_wait_ms after the last run ended found the model idle
            # (it goes at once) unless it is one of that run's callers coming back (RETURN_WINDOW_S).
            back = self._waiting(first)[0]  # predictions queued: the last run's callers back so far
            returning = time.monotonic() - self._last_end < RETURN_WINDOW_S and back < self._last_size
            if (first.arrived > self._last_end + wait and not returning) or remaining <= 0:
                return
            # The last run's callers are all back: waiting longer only idles the model (~5 ms a run).
            if back >= self._last_size:
                return
            self._cond.wait(remaining)

    def _waiting(self, first: QueuedCall) -> Tuple[int, int]:
        """Predictions and tokens of the queued calls of ``first``'s key within the window."""
        size = cost = 0
        for job in self._pending[: self.window]:
            if job.key is first.key or job.key == first.key:
                size, cost = size + job.size, cost + job.cost
        return size, cost

    def _full(self, first: QueuedCall) -> bool:
        """Whether enough calls of ``first``'s key wait to fill a run."""
        size, cost = self._waiting(first)
        return size >= self.max_batch or cost >= self.max_tokens

    def _take(self) -> List[QueuedCall]:
        """The oldest call and, from the next ``window`` calls of its key, those nearest its
        length per prediction, within ``max_batch`` and ``max_tokens``; live ones only."""
        first = self._pending[0]
        per = first.cost / max(first.size, 1)
        mates = [
            (i, job)
            for i, job in enumerate(self._pending[1 : self.window], 1)
            if job.key is first.key or job.key == first.key
        ]
        mates.sort(key=lambda pair: abs(pair[1].cost / max(pair[1].size, 1) - per))
        chosen, size, cost = {0}, first.size, first.cost
        for i, job in mates:
            if size + job.size <= self.max_batch and cost + job.cost <= self.max_tokens:
                chosen.add(i)
                size, cost = size + job.size, cost + job.cost
        batch = [job for i, job in enumerate(self._pending) if i in chosen]
        self._pending = [job for i, job in enumerate(self._pending) if i not in chosen]
        self._queued -= size
        now = time.monotonic()
        live = []
        for job in batch:
            if job.live(now):
                live.append(job)
            else:  # dropped before it was scored: its deadline passed, or its client left
                self.dropped["deadline" if job.deadline is not None and now > job.deadline else "cancelled"] += 1
        return live

    def _prepared(self, batch: List[QueuedCall]) -> Any:
        """The batch as one call, prepared now where the metric allows (None: score apart)."""
        try:
            call = batch[0].call if len(batch) == 1 else type(batch[0].call).concat([job.call for job in batch])
            if self._handoff is not None and isinstance(call, Call):
                self.scorer.prepare(call)
            return call
        except Exception:  # a bad call of the batch: run() raises it again, for that call alone
            return None if len(batch) > 1 else batch[0].call

    def _score(self, batch: List[QueuedCall], call: Any = None) -> None:
        """Run ``batch`` as one call (``call``: it, already joined; apart if that fails), each
        job its part; then ``on_batch``."""
        now = time.monotonic()
        live = [job for job in batch if not self._drop_late(job, now)]
        batch, call = (
            (live, None) if len(live) < len(batch) else (batch, call)
        )  # prepared ahead, then cancelled or expired
        if not batch:
            return
        start = time.perf_counter()
        self.batches += 1
        self._last_size = sum(job.size for job in batch)
        try:
            if len(batch) == 1:
                self._score_alone(batch[0], call)
            else:
                self._score_merged(batch, call)
        finally:
            with self._cond:
                self._last_end = time.monotonic()
                self._cond.notify_all()
        if self.on_batch is not None:
            try:
                self.on_batch(sum(job.size for job in batch), len(batch), time.perf_counter() - start)
            except Exception:  # a metrics callback must never stop the worker (every later call would hang)
                logger.exception("nlgscore: the micro-batcher's on_batch callback failed; scoring goes on")

    def _drop_late(self, job: QueuedCall, now: float) -> bool:
        """Whether ``job`` (taken, not run) was cancelled or expired: then answered so, counted, unscored."""
        late = job.deadline is not None and now > job.deadline
        if not (late or job.call.cancelled):
            return False
        with self._cond:
            self.dropped["deadline" if late else "cancelled"] += 1
        job.future.set_exception(_refusal(late))
        return True

    def _score_merged(self, batch: List[QueuedCall], call: Any) -> None:
        try:
            merged = self.scorer.run(
                call if call is not None else type(batch[0].call).concat([job.call for job in batch])
            )
        except Exception as err:  # some call of the batch is bad: score them apart, so only it fails
            if isinstance(err, CallCancelled) and all(job.call.cancelled for job in batch):
                now = time.monotonic()  # every call of the run was cancelled: it stopped between batches
                for job in batch:
                    job.future.set_exception(_refusal(job.deadline is not None and now > job.deadline))
                return
            logger.info(
                "a merged batch of %d calls failed (%s: %s); scoring them separately",
                len(batch),
                type(err).__name__,
                err,
            )
            for job in batch:
                self._score_alone(job)
        else:
            now = time.monotonic()
            for job, part in zip(batch, merged.split([job.size for job in batch]), strict=True):
                if job.call.cancelled:  # its caller left (or its deadline passed) while the others' run went on
                    job.future.set_exception(_refusal(job.deadline is not None and now > job.deadline))
                else:
                    job.future.set_result(part)

    def _score_alone(self, job: QueuedCall, call: Any = None) -> None:
        try:
            job.future.set_result(self.scorer.run(call if call is not None else job.call))
        except BaseException as err:  # the caller gets its own error (KeyboardInterrupt included: never hang a caller)
            job.future.set_exception(err)


def _refusal(late: bool) -> Exception:
    """What a call dropped or cut gets: TimeoutError past its deadline, else CallCancelled."""
    if late:
        return TimeoutError("the call's deadline passed before it was scored")
    return CallCancelled("the call was cancelled before it was scored")


def check_settings(max_batch: Any, max_wait_ms: Any, max_queue: Any) -> Tuple[int, float, int]:
    """The batcher's settings, checked (errors name them); also for a server before its model loads.

    >>> check_settings(64, 5, 100)
    (64, 5.0, 100)
    """
    if (
        isinstance(max_wait_ms, bool)
        or not isinstance(max_wait_ms, (int, float))
        or not 0 <= max_wait_ms < float("inf")
    ):
        raise ArgumentError(f"max_wait_ms must be a number >= 0, got {max_wait_ms!r}")
    return (
        check_positive("max_batch", max_batch, allow_none=False),
        float(max_wait_ms),
        check_positive("max_queue", max_queue, allow_none=False),
    )


def shared_batcher(scorer: Any) -> MicroBatcher:
    """The batcher behind ``scorer.acompute``: the scorer's own (``Scorer.batcher()``), one per scorer."""
    return scorer.batcher()
