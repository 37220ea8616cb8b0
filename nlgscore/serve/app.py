"""The ASGI app of ``nlgscore serve``: one scorer, many callers, merged by a micro-batcher.

Built on Starlette (the layer FastAPI itself runs on; chosen by measurement, see BENCHMARKS.md
"Serving": the same endpoint served more requests per second, and the requests are checked by
nlgscore's own argument checks, which name the field, so FastAPI's pydantic layer and its 422
bodies would only be in the way of the ``400 {"error": ...}`` contract).

Endpoints (see :mod:`nlgscore.serve.protocol` for the bodies):

* ``GET /health``: 200 ``{"status": "ok", "metric", "signature", "queue", "needs", "matrix"}``
  once the model is loaded; 503 ``{"status": "loading"}`` before (and ``"error"`` if it failed);
* ``POST /v1/score``, ``POST /get_reward`` (OpenRLHF), ``POST /v1/matrix``;
* ``GET /metrics``: Prometheus text (:mod:`nlgscore.serve.metrics`).

Refusals: 400 a malformed body (naming the field), 401 a missing or wrong bearer token (with
``api_key``), 413 a body over ``max_body_bytes`` or more than ``max_items`` predictions, 422 a
score that is not finite, 503 a full queue (with ``Retry-After``) or a model still loading, 504
a request not scored within ``timeout`` seconds. ``/health`` needs no token (probes).

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
from typing import Any, Awaitable, Callable, Optional

from nlgscore.core.errors import NlgscoreError
from nlgscore.core.extras import require
from nlgscore.core.microbatch import DEFAULT_MAX_BATCH, DEFAULT_MAX_QUEUE, DEFAULT_MAX_WAIT_MS, MicroBatcher, QueueFullError, check_settings
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.serve.metrics import ServerMetrics
from nlgscore.serve.protocol import HTTPError, matrix_inputs, parse_body, reward_inputs, reward_response, score_inputs, score_response

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0  # seconds a request may wait for its score
DEFAULT_MAX_BODY_BYTES = 8 << 20  # 8 MiB: thousands of sentences
DEFAULT_MAX_ITEMS = 4096  # predictions per request
DEFAULT_MAX_MATRIX_CELLS = 1 << 20  # pairs per /v1/matrix request
RETRY_AFTER = "1"  # seconds, for 503 answers


class _State:
    """What the loader thread fills in: the scorer and its batcher, or the error that stopped it."""

    def __init__(self) -> None:
        self.scorer: Any = None
        self.batcher: Optional[MicroBatcher] = None
        self.error: Optional[BaseException] = None


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
    on_loaded: Optional[Callable[[Optional[BaseException]], None]] = None,
    make_batcher: Optional[Callable[..., Any]] = None,
) -> Any:
    """The Starlette app serving ``scorer`` (see the module docstring).

    ``scorer`` is a loaded scorer, or a function of no arguments that loads one: it then runs in a
    thread when the app starts, ``/health`` answering 503 until it returns, and ``on_loaded(error)``
    is called when it is done (error None on success). The micro-batcher's ``max_batch``,
    ``max_wait_ms`` and ``max_queue`` are those of :class:`~nlgscore.core.microbatch.MicroBatcher`;
    ``make_batcher`` replaces that class by one with its constructor and ``submit`` (Ray Serve's
    replicas batch with ``@serve.batch``: :class:`nlgscore.serve.ray.ServeBatcher`).
    """
    require("starlette", "serve", "nlgscore serve")
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    state = _State()
    metrics = ServerMetrics(lambda: state.batcher.queued if state.batcher is not None else 0)
    batch_settings = dict(max_batch=max_batch, max_wait_ms=max_wait_ms, max_queue=max_queue)
    check_settings(max_batch, max_wait_ms, max_queue)  # bad settings fail here, before any model loads
    token = None if api_key is None else f"Bearer {api_key}".encode()

    def load() -> None:
        try:
            loaded = scorer() if callable(scorer) and not hasattr(scorer, "compute") else scorer
            state.batcher = (make_batcher or MicroBatcher)(loaded, **batch_settings, on_batch=metrics.observe_batch)
            state.scorer = loaded
        except BaseException as err:  # reported by /health and on_loaded (else logged), never lost in a thread
            if on_loaded is None:
                logger.error("nlgscore serve: the scorer failed to load: %s: %s", type(err).__name__, err)
            state.error = err
        if on_loaded is not None:
            on_loaded(state.error)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any):
        threading.Thread(target=load, name="nlgscore-serve-load", daemon=True).start()
        yield
        if state.batcher is not None:  # in-flight requests are done: drain what is queued, stop the worker
            await asyncio.to_thread(state.batcher.close)

    def ready() -> MicroBatcher:
        if state.error is not None:
            raise HTTPError(503, f"the scorer failed to load: {type(state.error).__name__}: {state.error}")
        if state.batcher is None:
            raise HTTPError(503, "the model is loading", {"Retry-After": RETRY_AFTER})
        return state.batcher

    async def read_json(request: Any) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > max_body_bytes):
            raise HTTPError(413 if declared.isdigit() else 400, f"the body is over {max_body_bytes} bytes (--max-body-bytes)" if declared.isdigit() else "bad Content-Length")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body_bytes:
                raise HTTPError(413, f"the body is over {max_body_bytes} bytes (--max-body-bytes)")
            chunks.append(chunk)
        return parse_body(b"".join(chunks))

    async def scored(call: Any, request: Any) -> Any:
        """The answer to a checked call (``make_call``/``make_matrix_call``), through the batcher's queue."""
        try:
            return await ready().run_call(call, timeout, request.is_disconnected)
        except QueueFullError as err:
            raise HTTPError(503, str(err), {"Retry-After": RETRY_AFTER}) from None
        except TimeoutError:
            raise HTTPError(504, f"not scored within {timeout:g} s (--timeout)") from None

    async def health(request: Any) -> Any:
        try:
            batcher = ready()
        except HTTPError as err:
            status = "error" if state.error is not None else "loading"
            return JSONResponse({"status": status, "error": str(err)}, 503, headers=err.headers)
        scorer_ = state.scorer
        return JSONResponse({"status": "ok", "metric": scorer_.name, "signature": str(scorer_.signature), "queue": batcher.queued,
                             "needs": list(scorer_.needs), "matrix": True})

    async def score(request: Any) -> Any:
        predictions, references, sources = score_inputs(await read_json(request), max_items)
        return JSONResponse(score_response(await scored(ready().scorer.make_call(predictions, references, sources), request)))

    async def get_reward(request: Any) -> Any:
        responses, labels, prompts = reward_inputs(await read_json(request), max_items)
        return JSONResponse(reward_response(await scored(ready().scorer.make_call(responses, labels, prompts), request), state.scorer.name))

    async def matrix(request: Any) -> Any:
        batcher = ready()
        predictions, references, column, source = matrix_inputs(await read_json(request), max_matrix_cells)
        grid = await scored(batcher.scorer.make_matrix_call(predictions, references, source=source, column=column), request)
        return JSONResponse({"matrix": grid.tolist(), "column": column, "signature": str(batcher.scorer.signature)})

    async def prometheus(request: Any) -> Any:
        return Response(metrics.exposition(), media_type=metrics.content_type)

    def route(path: str, handler: Callable[[Any], Awaitable[Any]], method: str, auth: bool = True) -> Any:
        async def endpoint(request: Any) -> Any:
            start = time.perf_counter()
            try:
                if auth and token is not None and not hmac.compare_digest(request.headers.get("authorization", "").encode(), token):
                    raise HTTPError(401, "a valid 'Authorization: Bearer <key>' header is required", {"WWW-Authenticate": "Bearer"})
                response = await handler(request)
            except HTTPError as err:
                response = JSONResponse({"error": str(err)}, err.status, headers=err.headers)
            except NonFiniteScoreError as err:
                response = JSONResponse({"error": str(err)}, 422)
            except NlgscoreError as err:  # the argument checks of compute: they name the field and item
                response = JSONResponse({"error": str(err)}, 400)
            except Exception as err:
                logger.exception("nlgscore serve: %s failed", path)
                response = JSONResponse({"error": f"internal error: {type(err).__name__}: {err}"}, 500)
            metrics.observe_request(path, response.status_code, time.perf_counter() - start)
            return response

        return Route(path, endpoint, methods=[method])

    routes = [
        route("/health", health, "GET", auth=False),
        route("/v1/score", score, "POST"),
        route("/get_reward", get_reward, "POST"),
        route("/v1/matrix", matrix, "POST"),
        route("/metrics", prometheus, "GET"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.nlgscore = state
    return app


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
