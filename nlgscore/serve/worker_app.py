"""An HTTP worker of ``nlgscore serve --workers N``: the endpoints of the single-process server,
whose scoring goes to the model process (:mod:`nlgscore.serve.model_process`) over ZeroMQ.

A worker holds no model. It reads and checks each body (the same endpoint functions, the same
``{"error"}`` answers), then sends the job's texts to the model process and answers with the
Result that comes back (float64 on the wire: the model process's bits). What crosses the
boundary besides the texts: the client's leaving and the end of the wait (a ``cancel``, so a
queued call is dropped unscored), and the drain's cut (503). ``--max-concurrent`` is counted
across workers (each worker writes its own slot of a shared array, admission reads them all);
``--max-queue`` and the reference cap are counted by the model process. ``/health`` and
``/metrics`` ask the model process, whose exposition holds every worker's request counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import Any, AsyncIterator, Dict, List, Optional

from starlette.responses import JSONResponse, Response

from nlgscore.backend.text_tokens import FrontTokenizer
from nlgscore.serve import ipc
from nlgscore.serve.endpoints.roll import poll_key, task_job
from nlgscore.serve.loop_socket import LoopSocket
from nlgscore.serve.protocol import HTTPError
from nlgscore.serve.service import RETRY_AFTER, Job, Service, Settings, until_disconnected

logger = logging.getLogger(__name__)

__all__ = ["WorkerService", "create_worker_app"]

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


class WorkerService(Service):
    """:class:`Service` whose scoring, ROLL tasks and probes are the model process's."""

    def __init__(self, settings: Settings, address: str, alive: Any, slots: Any, slot: int) -> None:
        super().__init__(settings)
        self.address, self.alive, self.slots, self.slot = address, alive, slots, slot
        self.counts = RequestCounts()
        self.metrics = self.counts  # type: ignore[assignment]  # the route's observe_request
        self.facts: Optional[ModelFacts] = None
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
        self._tasks = [asyncio.ensure_future(self._watch_model()), asyncio.ensure_future(self._flush())]

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

    # -- the Service's faces ----------------------------------------------------------------
    def ready(self) -> Any:
        if not self.alive.value:
            raise HTTPError(503, DEAD, {"Retry-After": RETRY_AFTER})
        if self.facts is None:
            raise HTTPError(503, "the model is loading", {"Retry-After": RETRY_AFTER})
        if self.draining:
            raise HTTPError(503, "the server is shutting down", {"Retry-After": RETRY_AFTER})
        return self

    def request_options(self) -> Dict[str, List[str]]:
        """The per-request options and settings as the model process reports them."""
        self.ready()
        return self.facts.options  # type: ignore[union-attr]

    @property
    def scorer(self) -> Any:
        return self.facts

    @scorer.setter
    def scorer(self, value: Any) -> None:
        pass  # the scorer is the model process's

    @contextlib.asynccontextmanager
    async def admitted(self) -> AsyncIterator[None]:
        """One request in the server: 429 above ``max_concurrent`` counted over every worker."""
        total = sum(self.slots)
        if total >= self.settings.max_concurrent:
            raise HTTPError(
                429,
                f"{total} requests are in progress (--max-concurrent {self.settings.max_concurrent}); retry later",
                {"Retry-After": RETRY_AFTER},
            )
        self.active += 1
        self.slots[self.slot] = self.active
        try:
            yield
        finally:
            self.active -= 1
            self.slots[self.slot] = self.active

    async def score(self, job: Job, client: Optional[Any] = None) -> Any:
        """The model process's answer to ``job`` (a Result or a matrix): 499 as soon as the client
        leaves, 503 if the drain cuts it, 504 past ``--timeout`` (the call is cancelled there)."""
        self.ready()
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
        cut = self.cut_signal()
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
            if self.cut:
                raise HTTPError(
                    503,
                    "the server shut down before this call was scored (--drain-timeout)",
                    {"Retry-After": RETRY_AFTER},
                )
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
        if self.front is None or self.facts is None:
            return None
        texts = [text for text in job.predictions if isinstance(text, str)]
        needs = self.facts.needs  # a side the metric does not read (a prompt for BERTScore) is not tokenized
        for need, side in (("references", job.references), ("sources", job.sources)):
            for entry in side if need in needs and isinstance(side, list) else ():
                if isinstance(entry, str):
                    texts.append(entry)
                elif isinstance(entry, list):
                    texts.extend(text for text in entry if isinstance(text, str))
        return self.front.content_ids(texts)

    async def drain(self, seconds: float) -> None:
        """As :meth:`Service.drain`, with ROLL's tasks held by the model process."""
        self.draining = True
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            held = 0
            with contextlib.suppress(HTTPError):
                held = (await self.ask(["info", None], PROBE_TIMEOUT_S)).get("tasks", 0)
            if not self.active and not held:
                return
            await asyncio.sleep(0.05)
        self.cut = True
        self.cut_signal().set_result(None)
        await asyncio.sleep(0)

    async def wait_for_model(self) -> None:
        """Learn the metric's name and signature once the model process has loaded it."""
        while self.facts is None:
            with contextlib.suppress(HTTPError):
                info = await self.ask(["info", None], PROBE_TIMEOUT_S)
                if info["status"] == "ok":
                    front = await self.ask(["front", None], PROBE_TIMEOUT_S)
                    self.front = None if front is None else FrontTokenizer.from_description(front)
                    self.facts = ModelFacts(info)
                    return
            await asyncio.sleep(0.1)


# -- the endpoints that ask the model process -----------------------------------------------
async def health(request: Any, service: WorkerService) -> Any:
    """``GET /health``: the model process's state (503 while it loads, drains or is gone)."""
    try:
        service.ready()
        info = await service.ask(["info", None], PROBE_TIMEOUT_S)
    except HTTPError as err:
        status = (
            "draining" if service.draining else "loading" if service.alive.value and service.facts is None else "error"
        )
        return JSONResponse({"status": status, "error": str(err)}, 503, headers=err.headers)
    if info["status"] != "ok":
        return JSONResponse(
            {"status": info["status"], "error": info.get("error", "")}, 503, headers={"Retry-After": RETRY_AFTER}
        )
    info.pop("tasks", None)
    return JSONResponse({**info, "matrix": True})


async def prometheus(request: Any, service: WorkerService) -> Any:
    """``GET /metrics``: the model process's exposition, this worker's counts sent first."""
    import prometheus_client

    text = await service.ask(["metrics", None, service.counts.take()], PROBE_TIMEOUT_S)
    return Response(text, media_type=prometheus_client.CONTENT_TYPE_LATEST)


async def submit_task(request: Any, service: WorkerService) -> Any:
    """ROLL's submit: the task is held by the model process, so that any worker answers its poll."""
    service.ready()
    job = task_job(await service.read_json(request))
    key = await service.ask(["hold", None, job.predictions, job.references, job.sources], PROBE_TIMEOUT_S)
    return JSONResponse({"errcode": 0, "errmsg": "", "reward_request_id": key})


async def task_result(request: Any, service: WorkerService) -> Any:
    """ROLL's poll, answered from the model process's tasks."""
    key = await poll_key(request, service)
    state, answer = await service.ask(["poll", None, key], PROBE_TIMEOUT_S)
    if state == "unknown":
        raise HTTPError(
            404, f"no task {key!r} (unknown, already read, or older than --task-ttl {service.settings.task_ttl:g} s)"
        )
    if state == "running":
        return JSONResponse({"errcode": 1, "errmsg": "running"})
    return JSONResponse(answer)


def create_worker_app(service: WorkerService, api_key: Optional[str] = None) -> Any:
    """The Starlette app of one worker."""
    from nlgscore.serve.app import api_token, routes
    from nlgscore.serve.direct_app import DirectStarlette

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await service.start()
        waiting = asyncio.ensure_future(service.wait_for_model())
        yield
        waiting.cancel()
        await service.stop()

    token = api_token(api_key)
    handlers = {
        "/health": health,
        "/metrics": prometheus,
        "/roll/submit_task": submit_task,
        "/roll/task_result": task_result,
    }
    app = DirectStarlette(routes(service, token, handlers), lifespan=lifespan)  # type: ignore[arg-type]
    app.state.nlgscore = service
    return app
