"""The ASGI app of ``nlgscore serve``: one scorer, many callers, merged by a micro-batcher.

Built on Starlette (the layer FastAPI itself runs on; chosen by measurement, see BENCHMARKS.md
"Serving": the same endpoint served more requests per second, and the requests are checked by
nlgscore's own argument checks, which name the field, so FastAPI's pydantic layer and its 422
bodies would only be in the way of the ``400 {"error": ...}`` contract). :func:`create_app` keeps
the gate (:class:`~nlgscore.serve.http.gate.Gate`, with this process's backend,
:class:`~nlgscore.serve.http.in_process.InProcess`) and the routing; each endpoint is a named
function in :mod:`nlgscore.serve.http.endpoints`.

Refusals: 400 a malformed body (naming the field), 401 a missing or wrong bearer token (with
``api_key``), 404 an unknown ROLL task, 408 a body that stalls more than ``body_timeout`` seconds,
413 a body over ``max_body_bytes`` or more than ``max_items`` predictions (or references), 422 a score that is not
finite, 429 (with ``Retry-After``) more than ``max_concurrent`` requests at once or a full queue,
503 a model still loading or a server draining, 504 a request not scored within ``timeout``
seconds. ``/health`` needs no token (probes).

>>> from starlette.testclient import TestClient
>>> from nlgscore.registry import build
>>> app = create_app(build("bertscore:minilm", num_layers=2))
>>> with TestClient(app) as client:
...     _ = wait_ready(client)
...     body = client.post("/v1/score", json={"predictions": ["It is cold."], "references": ["It is cold today."]}).json()
...     bad = client.post("/v1/score", json={"predictions": ["a", "b"], "references": ["c"]})
>>> sorted(body), body["scores"][0] > 0.8, bad.status_code, "references" in bad.json()["error"]
(['columns', 'primary', 'scores', 'signature'], True, 400, True)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import threading
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional

from nlgscore.backend.extras import require
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.errors import ArgumentError, NlgscoreError
from nlgscore.scheduler.microbatch import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_QUEUE,
    DEFAULT_MAX_WAIT_MS,
    MicroBatcher,
)
from nlgscore.serve.http.gate import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_MATRIX_CELLS,
    DEFAULT_TASK_TTL,
    DEFAULT_TIMEOUT,
    Gate,
    Settings,
)
from nlgscore.serve.http.heap import freeze_heap as freeze_startup_heap
from nlgscore.serve.http.in_process import InProcess
from nlgscore.serve.http.protocol import HTTPError

logger = logging.getLogger(__name__)

CLOSE_WAIT_S = 0.5  # seconds the shutdown waits for the scheduler's threads once the requests are answered

__all__ = [
    "create_app",
    "routes",
    "wait_ready",
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_BODY_TIMEOUT",
]


def create_app(
    scorer: Any,
    *,
    max_batch: int = DEFAULT_MAX_BATCH,
    max_wait_ms: float = DEFAULT_MAX_WAIT_MS,
    max_queue: int = DEFAULT_MAX_QUEUE,
    timeout: float = DEFAULT_TIMEOUT,
    api_key: Optional[str] = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_matrix_cells: int = DEFAULT_MAX_MATRIX_CELLS,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    task_ttl: float = DEFAULT_TASK_TTL,
    on_loaded: Optional[Callable[[Optional[BaseException]], None]] = None,
    make_batcher: Optional[Callable[..., Any]] = None,
    freeze_heap: bool = False,
    settings: Optional[Settings] = None,
) -> Any:
    """The Starlette app serving ``scorer`` (see the module docstring).

    Args:
        scorer: a loaded scorer, or a function of no arguments that loads one: it then runs in a
            thread when the app starts, ``/health`` answering 503 until it returns.
        max_batch: most predictions a merged call holds (the micro-batcher's, as the next two).
        max_wait_ms: how long a call waits for mates.
        max_queue: most predictions waiting.
        timeout: seconds a request may wait for its score.
        api_key: the bearer token every request but ``/health`` must carry (None: no check).
        max_body_bytes: the largest body.
        max_items: most predictions (or references) a request holds.
        max_matrix_cells: most pairs a ``/v1/matrix`` request holds.
        max_concurrent: most requests in the server at once.
        body_timeout: seconds a client may take to send its body.
        task_ttl: seconds a finished ROLL task waits to be polled.
        on_loaded: called with the load's error (None on success) once ``scorer`` is loaded.
        make_batcher: replaces :class:`~nlgscore.scheduler.microbatch.MicroBatcher` by a class with
            its constructor and ``submit`` (Ray Serve's replicas batch with ``@serve.batch``:
            :class:`nlgscore.serve.ray.ServeBatcher`).
        freeze_heap: once loaded, exempt the process's objects from garbage collections
            (:func:`nlgscore.serve.http.heap.freeze_heap`), for a process that only serves
            (``nlgscore serve``, a Ray replica), never a test's or a notebook's.
        settings: every limit above as one :class:`~nlgscore.serve.http.gate.Settings` (what
            ``nlgscore serve`` passes); the limit keywords must then be left at their defaults.

    Returns:
        The ASGI app; ``app.state.nlgscore`` is its :class:`~nlgscore.serve.http.gate.Gate`.

    Raises:
        ArgumentError: a limit out of range (before any model loads), naming it.
    """
    require("starlette", "serve", "nlgscore serve")
    from nlgscore.serve.http.direct_app import DirectStarlette

    given: Dict[str, Any] = dict(
        max_batch=max_batch,
        max_wait_ms=max_wait_ms,
        max_queue=max_queue,
        timeout=timeout,
        max_body_bytes=max_body_bytes,
        max_items=max_items,
        max_matrix_cells=max_matrix_cells,
        max_concurrent=max_concurrent,
        body_timeout=body_timeout,
        task_ttl=task_ttl,
    )
    if settings is None:
        settings = Settings(**given)  # bad settings fail here, before any model loads
    elif given != _DEFAULTS:
        changed = sorted(name for name, value in given.items() if _DEFAULTS[name] != value)
        raise ArgumentError(f"give the limits as settings= or as keywords, not both (also given: {', '.join(changed)})")
    backend = InProcess(settings)
    gate = Gate(settings, backend)
    token = api_token(api_key)

    def load() -> None:
        try:
            loaded = scorer() if callable(scorer) and not hasattr(scorer, "compute") else scorer
            batcher = (make_batcher or MicroBatcher)(
                loaded,
                max_batch=settings.max_batch,
                max_wait_ms=settings.max_wait_ms,
                max_queue=settings.max_queue,
                on_batch=backend.metrics.observe_batch,
            )
            if freeze_heap:  # the loaded model out of the GIL-holding full collections, before /health says ready
                logger.info("nlgscore serve: %d objects kept out of garbage collections", freeze_startup_heap())
            backend.loaded(loaded, batcher)
        except BaseException as err:  # reported by /health and on_loaded (else logged), never lost in a thread
            if on_loaded is None:
                logger.error("nlgscore serve: the scorer failed to load: %s: %s", type(err).__name__, err)
            backend.failed(err)
        if on_loaded is not None:
            on_loaded(backend.error)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any):
        threading.Thread(target=load, name="nlgscore-serve-load", daemon=True).start()
        yield
        gate.drain_state.draining = True
        if backend.batcher is not None:  # in-flight requests are done (or cut): score what is queued, stop the worker
            closing = threading.Thread(target=backend.batcher.close, name="nlgscore-serve-close", daemon=True)
            closing.start()
            # bounded: a run still on the model after a drain that cut its callers is left to the daemon threads
            give_up = time.monotonic() + CLOSE_WAIT_S
            while closing.is_alive() and time.monotonic() < give_up:
                await asyncio.sleep(0.02)

    app = DirectStarlette(routes(gate, token), lifespan=lifespan)
    app.state.nlgscore = gate
    return app


_DEFAULTS = dict(
    max_batch=DEFAULT_MAX_BATCH,
    max_wait_ms=DEFAULT_MAX_WAIT_MS,
    max_queue=DEFAULT_MAX_QUEUE,
    timeout=DEFAULT_TIMEOUT,
    max_body_bytes=DEFAULT_MAX_BODY_BYTES,
    max_items=DEFAULT_MAX_ITEMS,
    max_matrix_cells=DEFAULT_MAX_MATRIX_CELLS,
    max_concurrent=DEFAULT_MAX_CONCURRENT,
    body_timeout=DEFAULT_BODY_TIMEOUT,
    task_ttl=DEFAULT_TASK_TTL,
)


def route(
    gate: Any,
    token: Optional[bytes],
    path: str,
    handler: Callable[[Any, Any], Awaitable[Any]],
    method: str,
    auth: bool = True,
    admit: bool = True,
) -> Any:
    """The Starlette route of one endpoint: the bearer token, admission (429 above
    ``max_concurrent``), the refusals as ``{"error"}`` answers, and the request metrics."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request: Any) -> Any:
        start = time.perf_counter()
        try:
            if auth and token is not None and not authorized(request.headers.get("authorization", ""), token):
                raise HTTPError(
                    401, "a valid 'Authorization: Bearer <key>' header is required", {"WWW-Authenticate": "Bearer"}
                )
            if not admit:  # probes and scrapes are never refused for load
                response = await handler(request, gate)
            else:
                async with gate.admitted():
                    response = await handler(request, gate)
        except HTTPError as err:
            response = JSONResponse({"error": str(err)}, err.status, headers=err.headers)
        except NonFiniteScoreError as err:
            response = JSONResponse({"error": str(err)}, 422)
        except NlgscoreError as err:  # the argument checks of compute: they name the field and item
            response = JSONResponse({"error": str(err)}, 400)
        except Exception as err:
            logger.exception("nlgscore serve: %s failed", path)
            response = JSONResponse({"error": f"internal error: {type(err).__name__}: {err}"}, 500)
        gate.observe_request(path, response.status_code, time.perf_counter() - start)
        return response

    return Route(path, endpoint, methods=[method])


def api_token(api_key: Optional[str]) -> Optional[bytes]:
    """What :func:`authorized` compares a request's credentials with (None: no key, no check)."""
    return None if api_key is None else api_key.encode()


def authorized(header: str, token: bytes) -> bool:
    """Whether an ``Authorization`` header carries the bearer ``token``. The scheme is
    case-insensitive (RFC 9110, 11.1: ``bearer KEY`` is ``Bearer KEY``), the credentials are
    compared in constant time.

    >>> authorized("bearer s3cret", b"s3cret"), authorized("Bearer  s3cret", b"s3cret"), authorized("Basic s3cret", b"s3cret")
    (True, True, False)
    """
    scheme, _, credentials = header.strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), token)


def routes(gate: Any, token: Optional[bytes]) -> List[Any]:
    """Every endpoint's route, each through the gate (whichever backend scores behind it)."""
    from nlgscore.serve.http.endpoints import health, matrix, nemo_gym, openrlhf, prometheus, roll, score, slime

    table = [
        ("/health", health.health, "GET", False, False),
        ("/metrics", prometheus.prometheus, "GET", True, False),
        ("/v1/score", score.score, "POST", True, True),
        ("/v1/matrix", matrix.matrix, "POST", True, True),
        ("/get_reward", openrlhf.get_reward, "POST", True, True),
        ("/v1/reward", slime.slime_reward, "POST", True, True),
        ("/seed_session", nemo_gym.seed_session, "POST", True, True),
        ("/verify", nemo_gym.verify, "POST", True, True),
        ("/roll/submit_task", roll.submit_task, "POST", True, True),
        ("/roll/task_result", roll.task_result, "GET", True, True),
    ]
    return [route(gate, token, path, handler, method, auth, admit) for path, handler, method, auth, admit in table]


def wait_ready(client: Any, seconds: float = 60.0) -> Any:
    """Poll ``GET /health`` on a test client (or an httpx client) until it answers 200.

    Args:
        client: a client of the app whose requests take a path (Starlette's ``TestClient``, or
            an ``httpx.Client`` with the server's ``base_url``).
        seconds: how long to wait for a scorer still loading.

    Returns:
        The JSON body of the 200 answer: ``metric`` (the scorer's name), ``needs``,
        ``signature``, ``status``, ...

    Raises:
        RuntimeError: the scorer failed to load, or is not ready within ``seconds``.

    Example:
        >>> import nlgscore
        >>> from starlette.testclient import TestClient
        >>> with TestClient(create_app(nlgscore.load("chrf"))) as client:
        ...     health = wait_ready(client)
        >>> health["metric"], health["status"]
        ('chrf', 'ok')
    """
    deadline = time.monotonic() + seconds
    while True:
        response = client.get("/health")
        if response.status_code == 200:
            return response.json()
        if response.json().get("status") == "error" or time.monotonic() > deadline:
            raise RuntimeError(f"the server is not ready: {response.json()}")
        time.sleep(0.05)
