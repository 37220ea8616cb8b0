"""``GET /metrics``: the Prometheus text of :class:`nlgscore.serve.http.metrics.ServerMetrics`
(under ``--workers``, the model process's, with every worker's request counts)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from nlgscore.serve.http.gate import Gate


async def prometheus(request: Any, gate: Gate) -> Any:
    """Every metric of the server, in Prometheus' text format."""
    text, content_type = await gate.exposition()
    return Response(text, media_type=content_type)
