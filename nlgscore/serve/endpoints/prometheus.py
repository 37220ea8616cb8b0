"""``GET /metrics``: the Prometheus text of :class:`nlgscore.serve.metrics.ServerMetrics`."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response


async def prometheus(request: Any, service: Any) -> Any:
    """Every metric of the app, in Prometheus' text format."""
    return Response(service.metrics.exposition(), media_type=service.metrics.content_type)
