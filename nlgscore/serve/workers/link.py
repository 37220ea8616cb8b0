"""The backend of an HTTP worker of ``nlgscore serve --workers N``: the link to the model process
(:mod:`nlgscore.serve.workers.model_process`) over ZeroMQ (:class:`ModelProcessLink`).

A worker holds no model. Its gate reads and checks each body as the one-process server's does,
then the link sends the job's texts to the model process and answers with the Result that comes
back (float64 on the wire: the model process's bits). What crosses the boundary besides the
texts: the client's leaving and the end of the wait (a ``cancel``, so a queued call is dropped
unscored), and the drain's cut (503). ``--max-concurrent`` is counted across workers (each worker
writes its own slot of a shared array, admission reads them all); ``--max-queue`` and the
reference cap are counted by the model process; ``/health``, ``/metrics`` and ROLL's tasks are
the model process's, whose exposition holds every worker's request counts. While the model
process is down (the parent starts it again), every request is answered 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import Any, Dict, List, Optional, Tuple

from nlgscore.backend.text_tokens import FrontTokenizer
from nlgscore.serve.http.gate import RETRY_AFTER, Drain, Job, Settings, until_disconnected
from nlgscore.serve.http.protocol import HTTPError
from nlgscore.serve.workers import ipc
from nlgscore.serve.workers.loop_socket import LoopSocket

logger = logging.getLogger(__name__)

__all__ = ["ModelProcessLink", "ModelFacts"]

ANSWER_GRACE_S = 5.0  # seconds past --timeout a worker waits for the model process's own 504 before answering it
PROBE_TIMEOUT_S = 2.0  # seconds /health waits for the model process
WATCH_S = 0.2  # seconds between looks at whether the model process is alive
FLUSH_S = 0.5  # seconds between sending the request counts to the model process
DEAD = "the model process is not running; the server cannot score (restart it)"
# Texts a worker tokenizes on its event loop; a larger job is tokenized on a thread (40,000
# references took the loop for about a second, stalling every other connection of the worker).
INLINE_TOKENIZE_TEXTS = 256


class ModelFacts:
    """What the endpoints read of the scorer, as the model process reports it."""

    def __init__(self, info: Dict[str, Any]) -> None:
        self.name, self.signature, self.needs = (
            info["metric"],
            ipc.SignatureText(info["signature"]),
            tuple(info["needs"]),
        )
        self.options: Dict[str, List[str]] = info["options"]  # per-request options and settings


class RequestCounts:
    """The worker's request observations, sent to the model process in batches (``ServerMetrics``'s
    ``observe_request`` for the route, the counts kept by the model process)."""

    def __init__(self) -> None:
        self.pending: List[List[Any]] = []

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.pending.append([endpoint, status, seconds])

    def take(self) -> List[List[Any]]:
        taken, self.pending = self.pending, []
        return taken


class ModelProcessLink:
    """The gate's backend in a worker: every scoring request, probe and ROLL task goes to the
    model process at ``address`` (see the module docstring)."""

    def __init__(self, settings: Settings, address: str, alive: Any, slots: Any, slot: int) -> None:
        self.settings = settings
        self.address, self.alive, self.slots, self.slot = address, alive, slots, slot
        self.counts = RequestCounts()
        self.facts_: Optional[ModelFacts] = None
        self.front: Optional[FrontTokenizer] = None  # the scorer's tokenizer, where the metric lends it
        self.waiting: Dict[int, asyncio.Future] = {}
        self.ids = itertools.count()
        self.sock: Any = None
        self._tasks: List[asyncio.Task] = []

    # -- the link ---------------------------------------------------------------------------
    async def start(self) -> None:
        import zmq

        self.context = zmq.Context()
        sock = self.context.socket(zmq.DEALER)
        for option, value in ((zmq.LINGER, 0), (zmq.SNDHWM, 0), (zmq.RCVHWM, 0)):
            sock.setsockopt(option, value)
        sock.connect(self.address)
        self.sock = LoopSocket(sock, self._answer)
        self.outbox = ipc.Outbox(self.sock.send)  # the requests of one loop pass go as one frame
        self._tasks = [
            asyncio.ensure_future(self._watch_model()),
            asyncio.ensure_future(self._flush()),
            asyncio.ensure_future(self.wait_for_model()),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self.sock is not None:
            self.sock.close()
            self.context.term()

    def _answer(self, frames: List[bytes]) -> None:
        """Each answer of a frame to its waiter."""
        try:
            answers = ipc.messages(frames[0])
        except Exception:  # never stop answering the other waiters
            logger.exception("nlgscore serve: an answer from the model process could not be read")
            return
        waiting = self.waiting
        for rid, status, payload in answers:
            future = waiting.pop(rid, None)
            if future is not None and not future.done():
                future.set_result((status, payload))

    async def _watch_model(self) -> None:
        """Every waiter answered 503 once the model process is gone (the parent clears ``alive``)."""
        while True:
            await asyncio.sleep(WATCH_S)
            if not self.alive.value:
                for future in self.waiting.values():
                    if not future.done():
                        future.set_result((503, [DEAD, {"Retry-After": RETRY_AFTER}]))
                self.waiting.clear()

    async def _flush(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_S)
            if self.counts.pending and self.alive.value:  # no answer awaited: the model process only adds them
                self.outbox.post(["counts", -1, self.counts.take()])

    def send(self, message: List[Any]) -> asyncio.Future:
        """Send ``message`` (its id set here); the future of its ``(status, payload)``."""
        if not self.alive.value:
            raise HTTPError(503, DEAD, {"Retry-After": RETRY_AFTER})
        rid = message[1] = next(self.ids)
        try:  # encoded on its own: a job that cannot be sent is this request's 400, no other's
            self.outbox.post(message)
        except ipc.Unsendable as err:
            raise HTTPError(400, str(err)) from None
        future = self.waiting[rid] = asyncio.get_running_loop().create_future()
        return future

    def forget(self, rid: int) -> None:
        self.waiting.pop(rid, None)

    async def ask(self, message: List[Any], timeout: float) -> Any:
        """A request's payload (an HTTPError for any other status; 503 if no answer in ``timeout`` s)."""
        future = self.send(message)
        try:
            status, payload = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            self.forget(message[1])
            raise HTTPError(503, "the model process did not answer", {"Retry-After": RETRY_AFTER}) from None
        if status != 200:
            raise HTTPError(status, payload[0], payload[1])
        return payload

    async def wait_for_model(self) -> None:
        """Learn the metric's name and signature once the model process has loaded it."""
        while self.facts_ is None:
            with contextlib.suppress(HTTPError):
                info = await self.ask(["info", None], PROBE_TIMEOUT_S)
                if info["status"] == "ok":
                    front = await self.ask(["front", None], PROBE_TIMEOUT_S)
                    self.front = None if front is None else FrontTokenizer.from_description(front)
                    self.facts_ = ModelFacts(info)
                    return
            await asyncio.sleep(0.1)

    # -- the Backend's faces ------------------------------------------------------------------
    def check_ready(self) -> None:
        if not self.alive.value:
            raise HTTPError(503, DEAD, {"Retry-After": RETRY_AFTER})
        if self.facts_ is None:
            raise HTTPError(503, "the model is loading", {"Retry-After": RETRY_AFTER})

    def facts(self) -> Any:
        self.check_ready()
        return self.facts_

    def request_options(self) -> Dict[str, List[str]]:
        return self.facts().options

    def in_flight(self, own: int) -> int:
        return sum(self.slots)

    def set_in_flight(self, own: int) -> None:
        self.slots[self.slot] = own

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.counts.observe_request(endpoint, status, seconds)

    async def score(self, job: Job, client: Any, drain: Drain) -> Any:
        """The model process's answer to ``job`` (a Result or a matrix): 499 as soon as the client
        leaves, 503 if the drain cuts it, 504 past ``--timeout`` (the call is cancelled there)."""
        self.check_ready()
        if job.matrix:
            message = ["matrix", None, job.predictions, job.references, job.column, job.source]
        else:
            message = [
                "score",
                None,
                job.predictions,
                job.references,
                job.sources,
                job.options,
                await self.tokenized(job),
            ]
        future = self.send(message)
        rid = message[1]
        cut = drain.signal()
        gone = None if client is None else asyncio.ensure_future(until_disconnected(client))
        try:
            deadline = time.monotonic() + self.settings.timeout + ANSWER_GRACE_S
            while True:
                waits = {future, cut} if gone is None else {future, cut, gone}
                done, _ = await asyncio.wait(
                    waits, timeout=max(0.0, deadline - time.monotonic()), return_when=asyncio.FIRST_COMPLETED
                )
                if future in done:
                    status, payload = future.result()
                    if status != 200:
                        raise HTTPError(status, payload[0], payload[1])
                    return ipc.matrix_from(payload) if job.matrix else ipc.result_from(payload)
                if gone is not None and gone in done and (gone.cancelled() or gone.exception() is not None):
                    gone = None  # the watch broke, not the client: the call goes on unwatched
                    continue
                break
            self.outbox.post(["cancel", rid])
            if not done:
                raise HTTPError(504, f"not scored within {self.settings.timeout:g} s (--timeout)")
            if drain.cut:
                raise drain.refusal()
            raise HTTPError(499, "the client disconnected before its call was scored")
        finally:
            self.forget(rid)
            if gone is not None and not gone.done():
                gone.cancel()

    async def tokenized(self, job: Job) -> Optional[Dict[str, List[int]]]:
        """:meth:`tokens`, on a thread for a large job (the Rust tokenizer lets go of the GIL), so
        that the worker's other connections are served meanwhile."""
        if self.front is None:
            return None
        texts = len(job.predictions) + sum(
            len(side) for side in (job.references, job.sources) if isinstance(side, list)
        )
        if texts <= INLINE_TOKENIZE_TEXTS:
            return self.tokens(job)
        return await asyncio.get_running_loop().run_in_executor(None, self.tokens, job)

    def tokens(self, job: Job) -> Optional[Dict[str, List[int]]]:
        """The content ids of the job's texts, tokenized here so that the model process does not
        (None where the metric lends no tokenizer). Only strings: what is not one is refused by
        the model process's checks, with their message."""
        if self.front is None or self.facts_ is None:
            return None
        texts = [text for text in job.predictions if isinstance(text, str)]
        needs = self.facts_.needs  # a side the metric does not read (a prompt for BERTScore) is not tokenized
        for need, side in (("references", job.references), ("sources", job.sources)):
            for entry in side if need in needs and isinstance(side, list) else ():
                if isinstance(entry, str):
                    texts.append(entry)
                elif isinstance(entry, list):
                    texts.extend(text for text in entry if isinstance(text, str))
        return self.front.content_ids(texts)

    async def health(self, drain: Drain) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
        """The model process's state (503 while it loads, drains or is gone)."""
        try:
            self.check_ready()
            if drain.draining:
                raise HTTPError(503, "the server is shutting down", {"Retry-After": RETRY_AFTER})
            info = await self.ask(["info", None], PROBE_TIMEOUT_S)
        except HTTPError as err:
            status = (
                "draining" if drain.draining else "loading" if self.alive.value and self.facts_ is None else "error"
            )
            return 503, {"status": status, "error": str(err)}, err.headers
        if info["status"] != "ok":
            return 503, {"status": info["status"], "error": info.get("error", "")}, {"Retry-After": RETRY_AFTER}
        info.pop("tasks", None)
        info.pop("options", None)
        return 200, {**info, "matrix": True}, {}

    async def exposition(self) -> Tuple[Any, str]:
        """The model process's exposition, this worker's counts sent first."""
        import prometheus_client

        text = await self.ask(["metrics", None, self.counts.take()], PROBE_TIMEOUT_S)
        return text, prometheus_client.CONTENT_TYPE_LATEST

    async def hold(self, job: Job, drain: Drain) -> str:
        """The task is held by the model process, so that any worker answers its poll."""
        return await self.ask(["hold", None, job.predictions, job.references, job.sources], PROBE_TIMEOUT_S)

    async def poll(self, key: Any) -> Tuple[str, Any]:
        state, answer = await self.ask(["poll", None, key], PROBE_TIMEOUT_S)
        return state, answer

    async def held(self) -> int:
        return int((await self.ask(["info", None], PROBE_TIMEOUT_S)).get("tasks", 0))

    def running(self) -> bool:
        return False  # the model runs in the model process
