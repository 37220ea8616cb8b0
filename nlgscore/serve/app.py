"""The ASGI app of ``nlgscore serve``: one scorer, many callers, merged by a micro-batcher.

Built on Starlette (the layer FastAPI itself runs on; chosen by measurement, see BENCHMARKS.md
"Serving": the same endpoint served more requests per second, and the requests are checked by
nlgscore's own argument checks, which name the field, so FastAPI's pydantic layer and its 422
bodies would only be in the way of the ``400 {"error": ...}`` contract). :func:`create_app` keeps
the state (:class:`~nlgscore.serve.service.Service`) and the routing; each endpoint is a named
function in :mod:`nlgscore.serve.endpoints`.

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

from nlgscore.backend.batching import check_positive
from nlgscore.backend.extras import require
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.errors import ArgumentError, NlgscoreError
from nlgscore.scheduler.microbatch import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_QUEUE,
    DEFAULT_MAX_WAIT_MS,
    MicroBatcher,
    check_settings,
)
from nlgscore.serve.heap import freeze_heap as freeze_startup_heap
from nlgscore.serve.metrics import ServerMetrics, scorer_counters
from nlgscore.serve.protocol import HTTPError
from nlgscore.serve.service import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_MATRIX_CELLS,
    DEFAULT_TASK_TTL,
    DEFAULT_TIMEOUT,
    Service,
    Settings,
)

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
) -> Any:
    """The Starlette app serving ``scorer`` (see the module docstring).

    ``scorer`` is a loaded scorer, or a function of no arguments that loads one: it then runs in a
    thread when the app starts, ``/health`` answering 503 until it returns, and ``on_loaded(error)``
    is called when it is done (error None on success). The micro-batcher's ``max_batch``,
    ``max_wait_ms`` and ``max_queue`` are those of :class:`~nlgscore.scheduler.microbatch.MicroBatcher`;
    ``make_batcher`` replaces that class by one with its constructor and ``submit`` (Ray Serve's
    replicas batch with ``@serve.batch``: :class:`nlgscore.serve.ray.ServeBatcher`).
    ``freeze_heap``: once loaded, exempt the process's objects from garbage collections
    (:func:`nlgscore.serve.heap.freeze_heap`), for a process that only serves (``nlgscore serve``,
    a Ray replica), never a test's or a notebook's.
    """
    require("starlette", "serve", "nlgscore serve")
    from nlgscore.serve.direct_app import DirectStarlette

    check_settings(max_batch, max_wait_ms, max_queue)  # bad settings fail here, before any model loads
    check_positive("max_concurrent", max_concurrent, allow_none=False)
    for name, seconds in (("body_timeout", body_timeout), ("task_ttl", task_ttl)):
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < float("inf"):
            raise ArgumentError(f"{name} must be a number of seconds > 0, got {seconds!r}")
    settings = Settings(
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
    service = Service(settings)
    service.metrics = metrics = ServerMetrics(
        lambda: service.batcher.queued if service.batcher is not None else 0,
        lambda: service.active,
        telemetry=lambda: scorer_counters(service.scorer),
        scheduler_drops=lambda: getattr(service.batcher, "dropped", {}),
    )
    token = api_token(api_key)

    def load() -> None:
        try:
            loaded = scorer() if callable(scorer) and not hasattr(scorer, "compute") else scorer
            batcher = (make_batcher or MicroBatcher)(
                loaded,
                max_batch=max_batch,
                max_wait_ms=max_wait_ms,
                max_queue=max_queue,
                on_batch=metrics.observe_batch,
            )
            if (
                freeze_heap
            ):  # the loaded model out of the GIL-holding full collections (0.25-0.32 s each), before /health says ready
                logger.info("nlgscore serve: %d objects kept out of garbage collections", freeze_startup_heap())
            service.batcher, service.scorer = batcher, loaded
        except BaseException as err:  # reported by /health and on_loaded (else logged), never lost in a thread
            if on_loaded is None:
                logger.error("nlgscore serve: the scorer failed to load: %s: %s", type(err).__name__, err)
            service.error = err
        if on_loaded is not None:
            on_loaded(service.error)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any):
        threading.Thread(target=load, name="nlgscore-serve-load", daemon=True).start()
        yield
        service.draining = True
        if service.batcher is not None:  # in-flight requests are done (or cut): score what is queued, stop the worker
            closing = threading.Thread(target=service.batcher.close, name="nlgscore-serve-close", daemon=True)
            closing.start()
            # bounded: a run still on the model after a drain that cut its callers is left to the daemon threads
            give_up = time.monotonic() + CLOSE_WAIT_S
            while closing.is_alive() and time.monotonic() < give_up:
                await asyncio.sleep(0.02)

    app = DirectStarlette(routes(service, token), lifespan=lifespan)
    app.state.nlgscore = service
    return app


def route(
    service: Any,
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
                response = await handler(request, service)
            else:
                async with service.admitted():
                    response = await handler(request, service)
        except HTTPError as err:
            response = JSONResponse({"error": str(err)}, err.status, headers=err.headers)
        except NonFiniteScoreError as err:
            response = JSONResponse({"error": str(err)}, 422)
        except NlgscoreError as err:  # the argument checks of compute: they name the field and item
            response = JSONResponse({"error": str(err)}, 400)
        except Exception as err:
            logger.exception("nlgscore serve: %s failed", path)
            response = JSONResponse({"error": f"internal error: {type(err).__name__}: {err}"}, 500)
        service.metrics.observe_request(path, response.status_code, time.perf_counter() - start)
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


def routes(
    service: Any, token: Optional[bytes], handlers: Optional[Dict[str, Callable[[Any, Any], Awaitable[Any]]]] = None
) -> List[Any]:
    """Every endpoint's route; ``handlers`` replaces the handlers of some paths (a worker process
    asks the model process for /health, /metrics and ROLL's tasks)."""
    from nlgscore.serve.endpoints import health, matrix, nemo_gym, openrlhf, prometheus, roll, score, slime

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
    chosen = handlers or {}
    return [
        route(service, token, path, chosen.get(path, handler), method, auth, admit)
        for path, handler, method, auth, admit in table
    ]


def wait_ready(client: Any, seconds: float = 60.0) -> Any:
    """Poll ``GET /health`` on a test client (or an httpx client) until 200; its JSON body."""
    deadline = time.monotonic() + seconds
    while True:
        response = client.get("/health")
        if response.status_code == 200:
            return response.json()
        if response.json().get("status") == "error" or time.monotonic() > deadline:
            raise RuntimeError(f"the server is not ready: {response.json()}")
        time.sleep(0.05)
