"""``GET /metrics``: the Prometheus text of :class:`nlgscore.serve.metrics.ServerMetrics`."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from nlgscore.serve.protocol import HTTPError
from nlgscore.serve.service import Service


async def prometheus(request: Any, service: Service) -> Any:
    """Every metric of the app, in Prometheus' text format."""
    metrics = service.metrics
    if metrics is None:  # a Service built without metrics (create_app always gives it some)
        raise HTTPError(404, "this server keeps no metrics")
    return Response(metrics.exposition(), media_type=metrics.content_type)
