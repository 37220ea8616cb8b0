"""The model process of ``nlgscore serve --workers N``: the scorer, its caches, the scheduler
and ROLL's tasks, behind one ZeroMQ socket (:mod:`nlgscore.serve.workers.ipc`); no HTTP.

It runs the single-process server's backend, :class:`~nlgscore.serve.http.in_process.InProcess`,
itself, so every rule holds as in one process: a job becomes one checked call (``make_call``: the argument checks
and their messages; the metric tokenizes on the scheduler's feeder thread), ``--max-queue`` and
the reference cap are counted here for all workers, a call whose client left (a ``cancel`` from
its worker) is dropped before it is scored, and ``/metrics`` is this process's exposition with
the workers' request counts added. A worker's frame may hold many score jobs (those of one pass of
its event loop): each is checked alone, and the checked ones that may be scored as one are
queued as one call, so the scheduler's per-call work is paid once per frame. SIGTERM (from the
parent, once the workers have drained) closes the scheduler within a bounded wait and exits 0; a
scorer that cannot load exits 2.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import CancelledError
from typing import Any, Callable, Deque, Dict, List, Tuple

from nlgscore.core.call import Call, CallCancelled
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.errors import NlgscoreError
from nlgscore.scheduler.microbatch import MicroBatcher, QueueFullError
from nlgscore.serve.http.gate import RETRY_AFTER, Drain, Job, Settings
from nlgscore.serve.http.heap import freeze_heap
from nlgscore.serve.http.in_process import InProcess
from nlgscore.serve.http.metrics import ServerMetrics, scorer_counters
from nlgscore.serve.http.protocol import HTTPError
from nlgscore.serve.workers import ipc
from nlgscore.serve.workers.loop_socket import LoopSocket

logger = logging.getLogger(__name__)

__all__ = ["run_model", "LOAD_FAILED"]

LOAD_FAILED = 2  # the exit status of a model process whose scorer did not load (the parent exits 2 too)
CLOSE_WAIT_S = 0.5  # seconds the exit waits for the scheduler's threads


def answer_of(err: BaseException, timeout: float) -> Tuple[int, List[Any]]:
    """An exception of a call (its checks, its queue, its run) as the HTTP status and
    ``[message, headers]`` a worker answers, as :meth:`Service.score` maps them."""
    if isinstance(err, HTTPError):
        return err.status, [str(err), err.headers]
    if isinstance(err, QueueFullError):
        return 429, [str(err), {"Retry-After": RETRY_AFTER}]
    if isinstance(err, TimeoutError):
        return 504, [f"not scored within {timeout:g} s (--timeout)", {}]
    if isinstance(err, (CallCancelled, CancelledError)):
        return 499, ["the client disconnected before its call was scored", {}]
    if isinstance(err, NonFiniteScoreError):
        return 422, [str(err), {}]
    if isinstance(err, NlgscoreError):  # the argument checks of make_call: they name the field and item
        return 400, [str(err), {}]
    logger.error("nlgscore serve: a call failed: %s: %s", type(err).__name__, err)
    return 500, [f"internal error: {type(err).__name__}: {err}", {}]


class ModelServer:
    """The model process's loop: one ROUTER socket, one in-process backend."""

    def __init__(self, service: InProcess, address: str, active: Callable[[], int]) -> None:
        self.service, self.address = service, address
        self.drain = Drain()  # the workers drain; this process is stopped by its parent
        self.jobs: Dict[Tuple[bytes, int], Any] = {}  # the calls in the scheduler, for a worker's cancel
        # answered calls (a peer, its jobs, whether a matrix, the scheduler's future), for the loop to send
        self.finished: Deque[Tuple[bytes, List[Tuple[int, Any]], bool, Any]] = deque()
        self.wake_pending = False
        service.metrics = ServerMetrics(  # requests in flight: every worker's
            lambda: service.batcher.queued if service.batcher is not None else 0,
            active,
            telemetry=lambda: scorer_counters(service.scorer),
            scheduler_drops=lambda: getattr(service.batcher, "dropped", {}),
        )

    async def serve(self, stop: asyncio.Event) -> None:
        import zmq

        context = zmq.Context()
        sock = context.socket(zmq.ROUTER)
        for option, value in ((zmq.LINGER, 0), (zmq.SNDHWM, 0), (zmq.RCVHWM, 0)):
            sock.setsockopt(option, value)
        sock.bind(self.address)
        self.loop = asyncio.get_running_loop()
        self.link = LoopSocket(sock, self._message)
        self.outbox = ipc.Outbox(self.link.send)  # the answers of one loop pass go as one frame per worker
        try:
            await stop.wait()
        finally:
            self.link.close()
            context.term()

    def _message(self, frames: List[bytes]) -> None:
        peer, frame = frames
        try:
            received = ipc.messages(frame)
        except Exception:  # one bad frame never stops the loop that answers every worker
            logger.exception("nlgscore serve: a message from a worker could not be read")
            return
        scores: List[List[Any]] = []  # a run of score jobs, queued together (in order with the rest)
        for message in received:
            try:
                if message[0] == "score":
                    scores.append(message)
                    continue
                if scores:
                    self.submit_scores(peer, scores)
                    scores = []
                self.dispatch(peer, message)
            except Exception:  # one bad message never stops the loop that answers every worker
                logger.exception("nlgscore serve: a message from a worker failed")
        if scores:
            self.submit_scores(peer, scores)

    def reply(self, peer: bytes, rid: int, status: int, payload: Any) -> None:
        """Post one answer; one that cannot be encoded costs only its job (a 500 naming why)."""
        try:
            self.outbox.post([rid, status, payload], peer)
        except ipc.Unsendable as err:
            self.outbox.post([rid, 500, [f"the answer could not be sent to the HTTP worker: {err}", {}]], peer)

    def dispatch(self, peer: bytes, message: List[Any]) -> None:
        """Every message but ``score`` (whose runs :meth:`_message` hands to :meth:`submit_scores`)."""
        kind, rid = message[0], message[1]
        if kind == "cancel":
            call = self.jobs.get((peer, rid))
            if call is not None:  # a queued call is dropped unscored, a running one stops between its batches
                call.cancel()
        elif kind == "matrix":
            self.submit_matrix(peer, rid, message)
        elif kind == "info":
            self.reply(peer, rid, 200, self.info())
        elif kind == "front":  # asked once by each worker, once the scorer is loaded
            front = getattr(self.service.scorer, "front_tokenizer", None)
            self.reply(peer, rid, 200, front() if callable(front) else None)
        elif kind == "hold":
            asyncio.ensure_future(self.hold(peer, rid, Job(*message[2:5])))
        elif kind == "poll":
            asyncio.ensure_future(self.poll(peer, rid, message[2]))
        elif kind in ("metrics", "counts"):
            for endpoint, status, seconds in message[2]:
                self.service.metrics.observe_request(endpoint, status, seconds)
            if kind == "metrics":  # a scrape; "counts" (a worker's periodic send) needs no answer
                self.reply(peer, rid, 200, self.service.metrics.exposition())
        else:
            self.reply(peer, rid, 400, [f"unknown message {kind!r}", {}])

    def submit_scores(self, peer: bytes, messages: List[List[Any]]) -> None:
        """Check each of a worker's score jobs (its own answer if refused), then queue the checked
        calls that may be scored as one (equal merge keys) as one call of at most ``--max-batch``
        predictions: what the scheduler would merge anyway, without its per-call work for each.
        The answers are sent when the calls are done; no coroutine per call (the queued call's
        deadline is ``--timeout``; a worker that stops waiting sends ``cancel``)."""
        groups: Dict[Any, List[Tuple[int, Any]]] = {}
        for message in messages:
            rid = message[1]
            try:  # predictions, references, sources and the call options (document context)
                job = Job(message[2], message[3], message[4], options=message[5], tokens=message[6])
                call = self.service.checked_call(job)
            except Exception as err:
                self.reply(peer, rid, *answer_of(err, self.service.settings.timeout))
                continue
            key = call.merge_key
            groups.setdefault(("alone", rid) if key is None else key, []).append((rid, call))
        limit = self.service.settings.max_batch
        for group in groups.values():
            part: List[Tuple[int, Any]] = []
            size = 0
            for entry in group:
                if part and size + entry[1].size > limit:
                    self.queue(peer, part)
                    part, size = [], 0
                part.append(entry)
                size += entry[1].size
            self.queue(peer, part)

    def submit_matrix(self, peer: bytes, rid: int, message: List[Any]) -> None:
        try:
            job = Job(message[2], message[3], matrix=True, column=message[4], source=message[5])
            call = self.service.checked_call(job)
        except Exception as err:
            self.reply(peer, rid, *answer_of(err, self.service.settings.timeout))
            return
        self.queue(peer, [(rid, call)], matrix=True)

    def queue(self, peer: bytes, group: List[Tuple[int, Any]], matrix: bool = False) -> None:
        """Queue ``group``'s calls as one (each keeps its cancel: the joined call is dropped once all are)."""
        service, timeout = self.service, self.service.settings.timeout
        call = group[0][1] if len(group) == 1 else Call.concat([call for _, call in group])
        arrived = time.perf_counter()
        try:
            queued = service.batcher.submit_call(call, time.monotonic() + timeout)  # type: ignore[union-attr]  # checked_call checked it
        except QueueFullError as err:
            if len(group) > 1:  # as many calls as fit are taken, one by one
                for entry in group:
                    self.queue(peer, [entry])
                return
            self.reply(peer, group[0][0], *answer_of(err, timeout))
            return
        except Exception as err:
            for rid, _ in group:
                self.reply(peer, rid, *answer_of(err, timeout))
            return
        for rid, part in group:
            service.metrics.watch_queue(queued, arrived)  # one wait per request
            self.jobs[(peer, rid)] = part
        queued.add_done_callback(lambda future: self.done(peer, group, matrix, future))

    def done(self, peer: bytes, group: List[Tuple[int, Any]], matrix: bool, future: Any) -> None:
        """On the scheduler's thread: hand the answer to the loop, waking it once for a whole batch."""
        self.finished.append((peer, group, matrix, future))
        if not self.wake_pending:
            self.wake_pending = True
            self.loop.call_soon_threadsafe(self.answer_finished)

    def answer_finished(self) -> None:
        self.wake_pending = (
            False  # before draining: an answer appended from now on either is drained here or wakes the loop again
        )
        while self.finished:
            self.answer(*self.finished.popleft())

    def answer(self, peer: bytes, group: List[Tuple[int, Any]], matrix: bool, future: Any) -> None:
        jobs, timeout = self.jobs, self.service.settings.timeout
        for rid, _ in group:
            jobs.pop((peer, rid), None)
        error = CancelledError() if future.cancelled() else future.exception()
        refused = (CallCancelled, CancelledError, TimeoutError)  # the scheduler's refusals: answered as they are
        if error is not None and len(group) > 1 and not isinstance(error, refused):
            for entry in group:  # one bad call of the joined ones: each is scored apart, so only it fails
                if not entry[1].cancelled:
                    self.queue(peer, [entry])
            return
        if error is not None:
            for rid, _ in group:
                self.reply(peer, rid, *answer_of(error, timeout))
            return
        result = future.result()
        parts = [result] if len(group) == 1 else result.split([call.size for _, call in group])
        for (rid, call), part in zip(group, parts):
            if call.cancelled:  # its worker stopped waiting (its client left): nothing to answer
                continue
            try:
                self.reply(peer, rid, 200, part.tolist() if matrix else ipc.result_payload(part))
            except Exception as err:  # an answer that cannot be sent as msgpack: the worker is told, never left waiting
                self.reply(peer, rid, *answer_of(err, timeout))

    def info(self) -> Dict[str, Any]:
        service = self.service
        try:
            service.check_ready()
        except HTTPError as err:
            status = "error" if service.error is not None else "loading"
            return {"status": status, "error": str(err), "tasks": len(service.tasks)}
        return {**service.info(), "tasks": len(service.tasks), "options": service.request_options()}

    async def hold(self, peer: bytes, rid: int, job: Job) -> None:
        """A ROLL task: held here, so that any worker can answer its poll."""
        try:
            key = await self.service.hold(job, self.drain)
        except HTTPError as err:
            self.reply(peer, rid, err.status, [str(err), err.headers])
            return
        self.reply(peer, rid, 200, key)

    async def poll(self, peer: bytes, rid: int, key: Any) -> None:
        """``["unknown"|"running"|"done", answer]`` (a done task is then forgotten)."""
        self.reply(peer, rid, 200, list(await self.service.poll(key)))


def _load(load: Callable[[], Any], service: InProcess, ready: Any, finish: Callable[[int], None]) -> None:
    """Load the scorer and its scheduler (on a thread: the socket answers "loading" meanwhile)."""
    settings = service.settings
    try:
        scorer = load()
        batcher = MicroBatcher(
            scorer,
            max_batch=settings.max_batch,
            max_wait_ms=settings.max_wait_ms,
            max_queue=settings.max_queue,
            on_batch=service.metrics.observe_batch,
        )
        freeze_heap()  # the loaded model out of the GIL-holding full collections, before /health says ready
        service.loaded(scorer, batcher)
        ready.set()
    except BaseException as err:  # reported once, on the parent's stderr; the server then stops
        print(f"nlgscore serve: error: {err}", file=sys.stderr, flush=True)
        service.failed(err)
        finish(LOAD_FAILED)


def run_model(load: Callable[[], Any], settings: Settings, address: str, active: Callable[[], int], ready: Any) -> None:
    """The model process's body: load the scorer in a thread (``ready.set()`` once loaded), serve
    the workers until SIGTERM, then close the scheduler (bounded) and exit; exit 2 if it cannot load."""
    service = InProcess(settings)
    server = ModelServer(service, address, active)
    status: List[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def finish(code: int) -> None:
            status.append(code)
            loop.call_soon_threadsafe(stop.set)

        signal.signal(signal.SIGTERM, lambda signum, frame: finish(0))
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent orders the stop
        threading.Thread(
            target=_load, args=(load, service, ready, finish), name="nlgscore-serve-load", daemon=True
        ).start()
        await server.serve(stop)

    asyncio.run(main())
    if service.batcher is not None:
        closing = threading.Thread(target=service.batcher.close, daemon=True)
        closing.start()
        closing.join(CLOSE_WAIT_S)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status[0] if status else 0)  # daemon threads still on the model are not waited for
