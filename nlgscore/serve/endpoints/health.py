"""``GET /health``: 200 once the model is loaded; 503 while loading (``"error"`` if it failed) or draining."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.protocol import HTTPError
from nlgscore.serve.service import Service


async def health(request: Any, service: Service) -> Any:
    """``{"status": "ok", "metric", "signature", "queue", "needs", "matrix"}`` or 503 ``{"status", "error"}``."""
    try:
        batcher = service.ready()
    except HTTPError as err:
        status = "error" if service.error is not None else "draining" if service.draining else "loading"
        return JSONResponse({"status": status, "error": str(err)}, 503, headers=err.headers)
    scorer = service.scorer
    return JSONResponse(
        {
            "status": "ok",
            "metric": scorer.name,
            "signature": str(scorer.signature),
            "queue": batcher.queued,
            "needs": list(scorer.needs),
            "matrix": True,
        }
    )
