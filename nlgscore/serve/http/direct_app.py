"""The app class of ``nlgscore serve`` and its workers: Starlette, whose own endpoints are called
without its middleware stack and router.

Every endpoint of the server answers its own errors (``route`` in :mod:`nlgscore.serve.http.app` turns
each refusal and failure into its ``{"error"}`` answer), so Starlette's error middleware, its
exception middleware and the router's matching only add CPU to every request: about a fifth of a
one-pair ``/v1/score``'s event-loop time (BENCHMARKS "Serving"). A request for an exact path and
method of the table goes straight to its endpoint; anything else (the lifespan, a 404 or 405, a
path under a ``root_path``) takes Starlette's own way, with its answers.

>>> from starlette.responses import PlainTextResponse
>>> from starlette.routing import Route
>>> from starlette.testclient import TestClient
>>> async def hello(request):
...     return PlainTextResponse("hello")
>>> app = DirectStarlette(routes=[Route("/hello", hello, methods=["GET"])])
>>> with TestClient(app) as client:
...     client.get("/hello").text, client.get("/other").status_code, client.post("/hello").status_code
('hello', 404, 405)
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence, Tuple

from starlette.applications import Starlette
from starlette.requests import Request

__all__ = ["DirectStarlette"]


class DirectStarlette(Starlette):
    """Starlette calling the endpoints of its plain routes directly (see the module docstring)."""

    def __init__(self, routes: Sequence[Any], **kwargs: Any) -> None:
        super().__init__(routes=list(routes), **kwargs)
        self.direct: Dict[Tuple[str, str], Callable[[Request], Any]] = {
            (route.path, method): route.endpoint for route in routes for method in route.methods or ()
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            endpoint = self.direct.get((scope["path"], scope["method"]))
            if endpoint is not None:
                scope["app"] = self
                response = await endpoint(Request(scope, receive, send))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)
