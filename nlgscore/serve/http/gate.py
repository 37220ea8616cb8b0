"""The HTTP gate of ``nlgscore serve``: what every endpoint passes through, whatever scores.

* :class:`Settings`: the server's limits (the flags of ``nlgscore serve``), checked when made:
  the one object the CLI, :func:`~nlgscore.serve.http.app.create_app`, the ``--workers``
  processes and Ray Serve take.
* :class:`Gate`: admission (429 above ``max_concurrent``), the drain (503 while draining, then the
  cut), reading a body within ``body_timeout`` by the one JSON reading rule, and the request
  observations; every scoring request goes through :meth:`Gate.score`.
* :class:`Backend`: the seam behind the gate, what actually scores and holds ROLL's tasks:
  :class:`~nlgscore.serve.http.in_process.InProcess` (the scorer and its micro-batcher in this
  process) or :class:`~nlgscore.serve.workers.link.ModelProcessLink` (the model process of
  ``--workers``, over ZeroMQ). No endpoint knows which.

>>> Settings(max_batch=0)
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: max_batch (--max-batch) must be a positive integer, got 0
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from dataclasses import dataclass, field, fields
from typing import Any, AsyncIterator, Dict, List, Optional, Protocol, Tuple

from nlgscore.errors import ArgumentError
from nlgscore.scheduler.microbatch import DEFAULT_MAX_BATCH, DEFAULT_MAX_QUEUE, DEFAULT_MAX_WAIT_MS
from nlgscore.serve.http.protocol import HTTPError, parse_body, parse_object

DEFAULT_TIMEOUT = 60.0  # seconds a request may wait for its score
DEFAULT_MAX_BODY_BYTES = 8 << 20  # 8 MiB: thousands of sentences
DEFAULT_MAX_ITEMS = 4096  # predictions per request
DEFAULT_MAX_MATRIX_CELLS = 1 << 20  # pairs per /v1/matrix request
DEFAULT_MAX_CONCURRENT = 512  # requests in the server at once (TEI's --max-concurrent-requests)
DEFAULT_BODY_TIMEOUT = 30.0  # seconds a client may take to send its body (8 MiB at 2 Mbit/s)
RETRY_AFTER = "1"  # seconds, for 429 and 503 answers
DEFAULT_TASK_TTL = 600.0  # seconds a finished ROLL task waits to be polled (ROLL's default task timeout is 300 s)

__all__ = ["Settings", "Job", "Gate", "Backend", "Drain", "until_disconnected", "RETRY_AFTER"]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Settings:
    """The server's limits, checked when made (errors name the field and its flag).

    Attributes:
        max_batch: most predictions a merged call holds (``--max-batch``).
        max_wait_ms: how long a call waits for mates (``--max-wait-ms``).
        max_queue: most predictions waiting in the queue (``--max-queue``).
        timeout: seconds a request may wait for its score (``--timeout``).
        max_body_bytes: the largest body (``--max-body-bytes``).
        max_items: most predictions (or references) a request holds (``--max-items``).
        max_matrix_cells: most pairs a ``/v1/matrix`` request holds.
        max_concurrent: most requests in the server at once, over every worker (``--max-concurrent``).
        body_timeout: seconds a client may take to send its body (``--body-timeout``).
        task_ttl: seconds a finished ROLL task waits to be polled (``--task-ttl``).

    Example:
        >>> Settings(max_items=64).max_items
        64
    """

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

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.type in ("int", int):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ArgumentError(f"{spec.name} ({_flag(spec.name)}) must be a positive integer, got {value!r}")
            else:
                least = 0.0 if spec.name == "max_wait_ms" else None
                finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
                if not finite or (value < least if least is not None else value <= 0):
                    bound = ">= 0" if least is not None else "> 0"
                    raise ArgumentError(
                        f"{spec.name} ({_flag(spec.name)}) must be a finite number {bound}, got {value!r}"
                    )

    def replace(self, **changes: Any) -> "Settings":
        """These settings with ``changes`` (checked again)."""
        return Settings(**{**{spec.name: getattr(self, spec.name) for spec in fields(self)}, **changes})


@dataclass
class Job:
    """One scoring request: pairs (``matrix`` False) or every prediction against every reference."""

    predictions: Any
    references: Any = None
    sources: Any = None
    matrix: bool = False
    column: Optional[str] = None
    source: Optional[str] = None
    options: Dict[str, Any] = field(default_factory=dict)  # call options of pairs (document context, a prompt)
    tokens: Optional[Dict[str, List[int]]] = None  # content ids of its texts, from a worker's front tokenizer


class Drain:
    """The gate's stop: ``draining`` once SIGTERM came (scoring requests get 503), ``cut`` once the
    drain ran out of time; :meth:`signal` is the one future every waiting request watches."""

    def __init__(self) -> None:
        self.draining = False
        self.cut = False
        self._signal: Optional["asyncio.Future[None]"] = None

    def signal(self) -> "asyncio.Future[None]":
        """Done at the cut: one future for all waiting requests, no task each."""
        if self._signal is None:
            self._signal = asyncio.get_running_loop().create_future()
        return self._signal

    def cut_now(self) -> None:
        self.cut = True
        if not self.signal().done():
            self.signal().set_result(None)

    def refusal(self) -> HTTPError:
        """What a request the cut stopped is answered."""
        return HTTPError(
            503, "the server shut down before this call was scored (--drain-timeout)", {"Retry-After": RETRY_AFTER}
        )


class Backend(Protocol):
    """What the gate scores through (see the module docstring). Every method that needs the scorer
    raises a 503 :class:`HTTPError` while it is not ready (loading, failed, or gone)."""

    def check_ready(self) -> None: ...

    def facts(self) -> Any:
        """The scorer's ``name``, ``signature`` and ``needs`` (a scorer, or what stands for it)."""

    def request_options(self) -> Dict[str, List[str]]: ...

    async def score(self, job: Job, client: Any, drain: Drain) -> Any: ...

    async def health(self, drain: Drain) -> Tuple[int, Dict[str, Any], Dict[str, str]]: ...

    async def exposition(self) -> Tuple[Any, str]: ...

    async def hold(self, job: Job, drain: Drain) -> str: ...

    async def poll(self, key: Any) -> Tuple[str, Any]: ...

    async def held(self) -> int: ...

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None: ...

    def in_flight(self, own: int) -> int:
        """Requests in the server when this process has ``own`` (every worker's, with ``--workers``)."""

    def set_in_flight(self, own: int) -> None: ...

    def running(self) -> bool:
        """Whether a run is still on the model in this process (the stop then skips the interpreter's exit)."""


class Gate:
    """The state every endpoint shares: settings, admission, the drain, the body reader; the
    scoring itself is the :class:`Backend`'s.

    >>> from nlgscore.serve.http.in_process import InProcess
    >>> gate = Gate(Settings(), InProcess(Settings()))
    >>> gate.ready()
    Traceback (most recent call last):
    ...
    nlgscore.serve.http.protocol.HTTPError: the model is loading
    """

    def __init__(self, settings: Settings, backend: Backend) -> None:
        self.settings = settings
        self.backend = backend
        self.drain_state = Drain()
        self.active = 0  # requests admitted in this process and not answered

    @property
    def draining(self) -> bool:
        return self.drain_state.draining

    def ready(self) -> None:
        """503 while the scorer is not ready (loading, failed, gone) or the server drains."""
        self.backend.check_ready()
        if self.drain_state.draining:
            raise HTTPError(503, "the server is shutting down", {"Retry-After": RETRY_AFTER})

    @property
    def scorer(self) -> Any:
        """The scorer's facts (``name``, ``signature``, ``needs``); 503 unless ready."""
        self.ready()
        return self.backend.facts()

    def request_options(self) -> Dict[str, List[str]]:
        """The scorer's per-request options and settings; 503 unless ready."""
        self.ready()
        return self.backend.request_options()

    @contextlib.asynccontextmanager
    async def admitted(self) -> AsyncIterator[None]:
        """One request in the server: 429 with Retry-After above ``max_concurrent`` at once."""
        total = self.backend.in_flight(self.active)
        if total >= self.settings.max_concurrent:
            raise HTTPError(
                429,
                f"{total} requests are in progress (--max-concurrent {self.settings.max_concurrent}); retry later",
                {"Retry-After": RETRY_AFTER},
            )
        self.active += 1
        self.backend.set_in_flight(self.active)
        try:
            yield
        finally:
            self.active -= 1
            self.backend.set_in_flight(self.active)

    async def drain(self, seconds: float) -> None:
        """Stop taking scoring requests (503), then wait at most ``seconds`` for the requests in the
        server to be answered and for the ROLL tasks already accepted to be polled (polls are still
        served). Whatever still waits then is answered 503 and its call dropped unscored (a running
        call stops between its batches)."""
        self.drain_state.draining = True
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            held = 0
            with contextlib.suppress(HTTPError):
                held = await self.backend.held()
            if not self.active and not held:
                return
            await asyncio.sleep(0.02)
        self.drain_state.cut_now()
        await asyncio.sleep(0)  # the waiting requests wake up and answer before the server closes

    async def score(self, job: Job, request: Optional[Any] = None) -> Any:
        """THE way every endpoint scores: a Result (pairs) or a matrix, within ``timeout``
        seconds; 499 as soon as the ``request``'s client disconnects, 503 at the drain's cut."""
        self.ready()
        return await self.backend.score(job, request, self.drain_state)

    async def health(self) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
        """``/health``'s status, body and headers."""
        return await self.backend.health(self.drain_state)

    async def exposition(self) -> Tuple[Any, str]:
        """``/metrics``: the Prometheus text and its content type."""
        return await self.backend.exposition()

    async def hold(self, job: Job) -> str:
        """Queue a ROLL task; its key for the poll."""
        self.ready()
        return await self.backend.hold(job, self.drain_state)

    async def poll(self, key: Any) -> Tuple[str, Any]:
        """A ROLL task's ``("unknown"|"running"|"done", answer)``; a done one is then forgotten."""
        return await self.backend.poll(key)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.backend.observe_request(endpoint, status, seconds)

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

        reading = _read_body(request, limit)
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


async def _read_body(request: Any, limit: int) -> bytes:
    """The whole body, or 413 as soon as it passes ``limit`` bytes."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPError(413, f"the body is over {limit} bytes (--max-body-bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


async def until_disconnected(request: Any) -> None:
    """Return once the client of ``request`` (a Starlette request whose body was read) has gone.

    After the body, an ASGI server's ``receive()`` blocks until the client disconnects
    (``http.disconnect``; uvicorn's ``RequestResponseCycle.receive``, Ray Serve's
    ``ASGIReceiveProxy``), so this costs nothing while it waits. Any other message means the body
    was not read: a RuntimeError, which stops the watch rather than refusing the call."""
    message = await request.receive()
    if message.get("type") != "http.disconnect":
        raise RuntimeError(f"a disconnect watch got {message.get('type')!r}: the request body was not read")
