"""Serving a scorer over HTTP, and many callers of one scorer in a process.

The public names: :func:`create_app` (the ASGI app of ``nlgscore serve SPEC``: ``/health``,
``/v1/score``, ``/v1/matrix``, ``/metrics`` and the RL frameworks' reward protocols),
:func:`run_server` (uvicorn, SIGTERM finishing in-flight requests), :class:`RemoteScorer` (what
``nlgscore.load("http://HOST:PORT")`` returns: the same ``compute``/``matrix``/``Result`` as a
local scorer, with retries and timeouts), :class:`MicroBatcher` (concurrent calls merged into one
``run``: the queue behind ``Scorer.acompute``; build one for other settings), and
:func:`freeze_heap` (a serving process's loaded model kept out of garbage collections).

>>> import asyncio
>>> import nlgscore
>>> from nlgscore.serve import MicroBatcher
>>> scorer = nlgscore.load("chrf")
>>> batcher = MicroBatcher(scorer, max_batch=64, max_wait_ms=2)
>>> async def two_callers():
...     return await asyncio.gather(batcher.acompute(["The cat sat."], ["A cat sat."]),
...                                 batcher.acompute(["It rains."], ["It is raining."]))
>>> [r.scores == scorer.compute(p, q).scores for r, p, q in zip(asyncio.run(two_callers()),
...  [["The cat sat."], ["It rains."]], [["A cat sat."], ["It is raining."]])]
[True, True]
>>> batcher.close()

Internal rooms (paths may change): ``http/`` (the app, its admission gate, endpoints, protocol and
server), ``workers/`` (``nlgscore serve --workers``: the supervisor, the worker app and the model
process), ``ray.py`` (the same app on Ray Serve: ``nlgscore serve --ray``); the client is
``nlgscore.remote``. It sits beside ``integrations``: it builds scorers through the registry.
"""

from importlib import import_module
from typing import Any

# public name -> module: imported on first use (the app needs the `serve` extra, the client httpx)
_LAZY = {
    "create_app": "nlgscore.serve.http.app",
    "wait_ready": "nlgscore.serve.http.app",
    "run_server": "nlgscore.serve.http.server",
    "RemoteScorer": "nlgscore.remote.client",
    "RemoteResult": "nlgscore.remote.client",
    "ServerError": "nlgscore.remote.client",
    "MicroBatcher": "nlgscore.scheduler.microbatch",
    "QueueFullError": "nlgscore.scheduler.microbatch",
    "DEFAULT_MAX_BATCH": "nlgscore.scheduler.microbatch",
    "DEFAULT_MAX_WAIT_MS": "nlgscore.scheduler.microbatch",
    "DEFAULT_MAX_QUEUE": "nlgscore.scheduler.microbatch",
    "freeze_heap": "nlgscore.serve.http.heap",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore.serve' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
