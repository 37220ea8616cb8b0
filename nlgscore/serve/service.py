"""What every endpoint of ``nlgscore serve`` shares: the loaded scorer, the settings, admission
(429 above a bound, 503 while loading or draining), reading a body with a deadline, and the one
function through which every scoring request reaches the scheduler (:meth:`Service.score`).

>>> service = Service(Settings())
>>> service.ready()
Traceback (most recent call last):
...
nlgscore.serve.protocol.HTTPError: the model is loading
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, List, Optional

from nlgscore.core.call import CallCancelled
from nlgscore.scheduler.microbatch import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_QUEUE,
    DEFAULT_MAX_WAIT_MS,
    MicroBatcher,
    QueueFullError,
)
from nlgscore.serve.metrics import ServerMetrics
from nlgscore.serve.protocol import HTTPError, parse_body, parse_object

DEFAULT_TIMEOUT = 60.0  # seconds a request may wait for its score
DEFAULT_MAX_BODY_BYTES = 8 << 20  # 8 MiB: thousands of sentences
DEFAULT_MAX_ITEMS = 4096  # predictions per request
DEFAULT_MAX_MATRIX_CELLS = 1 << 20  # pairs per /v1/matrix request
DEFAULT_MAX_CONCURRENT = 512  # requests in the server at once (TEI's --max-concurrent-requests)
DEFAULT_BODY_TIMEOUT = 30.0  # seconds a client may take to send its body (8 MiB at 2 Mbit/s)
RETRY_AFTER = "1"  # seconds, for 429 and 503 answers
DEFAULT_TASK_TTL = 600.0  # seconds a finished ROLL task waits to be polled (ROLL's default task timeout is 300 s)


@dataclass
class Settings:
    """The app's limits (the flags of ``nlgscore serve``)."""

    max_batch: int = DEFAULT_MAX_BATCH
    max_wait_ms: float = DEFAULT_MAX_WAIT_MS
    max_queue: int = DEFAULT_MAX_QUEUE
    timeout: float = DEFAULT_TIMEOUT
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_items: int = DEFAULT_MAX_ITEMS
    max_matrix_cells: int = DEFAULT_MAX_MATRIX_CELLS
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    task_ttl: float = DEFAULT_TASK_TTL


@dataclass
class Job:
    """One scoring request: pairs (``matrix`` False) or every prediction against every reference."""

    predictions: Any
    references: Any = None
    sources: Any = None
    matrix: bool = False
    column: Optional[str] = None
    source: Optional[str] = None
    options: Dict[str, Any] = field(default_factory=dict)  # call options of pairs: document context
    tokens: Optional[Dict[str, List[int]]] = None  # content ids of its texts, from a worker's front tokenizer


class Service:
    """The state behind the endpoints: the scorer and its batcher once loaded, or the load error."""

    def __init__(self, settings: Settings, metrics: Optional[ServerMetrics] = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.scorer: Any = None
        self.batcher: Optional[MicroBatcher] = None
        self.error: Optional[BaseException] = None
        self.draining = False
        self.active = 0  # requests admitted and not answered
        self.tasks: Dict[str, Any] = {}  # ROLL's submitted tasks (serve.endpoints.roll), bounded by max_queue
        self.cut = False  # a drain ran out of time: every waiting call is answered 503
        self._cut: Optional["asyncio.Future[None]"] = None  # done at the cut; shared by every waiting request

    def ready(self) -> MicroBatcher:
        """The batcher; 503 while the model loads (or failed to) or the server drains."""
        if self.error is not None:
            raise HTTPError(503, f"the scorer failed to load: {type(self.error).__name__}: {self.error}")
        if self.batcher is None:
            raise HTTPError(503, "the model is loading", {"Retry-After": RETRY_AFTER})
        if self.draining:
            raise HTTPError(503, "the server is shutting down", {"Retry-After": RETRY_AFTER})
        return self.batcher

    @contextlib.asynccontextmanager
    async def admitted(self) -> AsyncIterator[None]:
        """One request in the server: 429 with Retry-After above ``max_concurrent`` at once."""
        if self.active >= self.settings.max_concurrent:
            raise HTTPError(
                429,
                f"{self.active} requests are in progress (--max-concurrent {self.settings.max_concurrent}); retry later",
                {"Retry-After": RETRY_AFTER},
            )
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1

    async def drain(self, seconds: float) -> None:
        """Stop taking scoring requests (503), then wait at most ``seconds`` for the requests in the
        server to be answered and for the ROLL tasks already accepted to be polled (polls are still
        served). Whatever still waits then is answered 503 and its call dropped unscored (a running
        call stops between its batches)."""
        self.draining = True
        deadline = time.monotonic() + seconds
        while (self.active or self.tasks) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if self.active or self.tasks:
            self.cut = True
            self.cut_signal().set_result(None)
            await asyncio.sleep(0)  # the waiting requests wake up and answer before the server closes

    def cut_signal(self) -> "asyncio.Future[None]":
        """The future every waiting request watches: done when a drain cuts them (one for all, no task each)."""
        if self._cut is None:
            self._cut = asyncio.get_running_loop().create_future()
        return self._cut

    async def read_json(self, request: Any, arrays: bool = False) -> Any:
        """The request's JSON object (or array, with ``arrays``): 413 over ``max_body_bytes``, 408 when
        the body has not arrived within ``body_timeout`` seconds (a client cannot hold the server)."""
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise HTTPError(
                413 if declared.isdigit() else 400,
                f"the body is over {limit} bytes (--max-body-bytes)" if declared.isdigit() else "bad Content-Length",
            )
        from starlette.requests import ClientDisconnect

        reading = self._read_body(request, limit)
        try:
            if hasattr(asyncio, "timeout"):  # Python 3.11+: one timer for the whole body, no task per chunk
                async with asyncio.timeout(self.settings.body_timeout):  # a trickle cannot hold a slot either
                    raw = await reading
            else:
                raw = await asyncio.wait_for(reading, self.settings.body_timeout)
        except ClientDisconnect:
            raise HTTPError(499, "the client disconnected while sending its body") from None
        except asyncio.TimeoutError:
            raise HTTPError(
                408, f"the request body did not arrive within {self.settings.body_timeout:g} s (--body-timeout)"
            ) from None
        return (parse_body if arrays else parse_object)(raw)

    @staticmethod
    async def _read_body(request: Any, limit: int) -> bytes:
        """The whole body, or 413 as soon as it passes ``limit`` bytes."""
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPError(413, f"the body is over {limit} bytes (--max-body-bytes)")
            chunks.append(chunk)
        return b"".join(chunks)

    def request_options(self) -> Dict[str, List[str]]:
        """The scorer's per-request options and settings (:func:`~nlgscore.serve.protocol.request_options`);
        503 unless ready."""
        from nlgscore.serve.protocol import request_options

        return request_options(type(self.ready().scorer))

    def checked_call(self, job: Job) -> Any:
        """The job as one checked call (``make_call`` or ``make_matrix_call``: their argument
        errors name the field); 413 above ``max_items`` references; 503 unless ready."""
        scorer = self.ready().scorer
        references = (
            0
            if job.matrix or job.references is None
            else sum(len(r) if isinstance(r, list) else 1 for r in job.references)
        )
        if (
            references > self.settings.max_items
        ):  # one prediction with 60,000 references is as much work as 60,000 pairs
            raise HTTPError(
                413,
                f"{references} references; this server takes at most {self.settings.max_items} per request (--max-items)",
            )
        if job.matrix:
            return scorer.make_matrix_call(job.predictions, job.references, source=job.source, column=job.column)
        call = scorer.make_call(job.predictions, job.references, job.sources, **job.options)
        call.token_ids = job.tokens
        return call

    async def score(self, job: Job, client: Optional[Any] = None) -> Any:
        """THE way every endpoint scores: a Result (pairs) or a matrix, within ``timeout`` seconds.

        The job becomes one checked call (``make_call``, or ``make_matrix_call`` for a matrix) on
        the batcher's queue, so pairs and matrices share one scheduler and nothing borrows a lock.
        A full queue is 429 (with Retry-After); 504 past the timeout, 499 as soon as the
        ``client`` (the Starlette request, its body read) disconnects: a queued call is then never
        scored and a running call stops between its batches. The time spent queued and the time spent
        computing are recorded separately.
        """
        batcher = self.ready()
        call = self.checked_call(job)
        arrived = time.perf_counter()
        metrics = self.metrics
        watch = None if metrics is None else (lambda future: metrics.watch_queue(future, arrived))
        timeout = self.settings.timeout
        try:
            gone = None if client is None else (lambda: until_disconnected(client))
            return await batcher.run_call(call, timeout, gone, watch=watch, stop=self.cut_signal())
        except QueueFullError as err:
            raise HTTPError(429, str(err), {"Retry-After": RETRY_AFTER}) from None
        except TimeoutError:
            raise HTTPError(504, f"not scored within {timeout:g} s (--timeout)") from None
        except CallCancelled:
            if self.cut:
                raise HTTPError(
                    503,
                    "the server shut down before this call was scored (--drain-timeout)",
                    {"Retry-After": RETRY_AFTER},
                ) from None
            raise HTTPError(499, "the client disconnected before its call was scored") from None


async def until_disconnected(request: Any) -> None:
    """Return once the client of ``request`` (a Starlette request whose body was read) has gone.

    After the body, an ASGI server's ``receive()`` blocks until the client disconnects
    (``http.disconnect``; uvicorn's ``RequestResponseCycle.receive``, Ray Serve's
    ``ASGIReceiveProxy``), so this costs nothing while it waits. Any other message means the body
    was not read: a RuntimeError, which stops the watch rather than refusing the call."""
    message = await request.receive()
    if message.get("type") != "http.disconnect":
        raise RuntimeError(f"a disconnect watch got {message.get('type')!r}: the request body was not read")
