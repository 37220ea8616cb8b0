"""``GET /health``: 200 once the model is loaded; 503 while loading (``"error"`` if it failed) or draining."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate


async def health(request: Any, gate: Gate) -> Any:
    """``{"status": "ok", "metric", "signature", "queue", "needs", "matrix"}`` or 503 ``{"status", "error"}``."""
    status, body, headers = await gate.health()
    return JSONResponse(body, status, headers=headers)
