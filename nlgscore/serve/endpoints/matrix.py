"""``POST /v1/matrix``: ``{"predictions", "references", "column"?, "source"?}`` → ``{"matrix", "column", "signature"}``."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.protocol import matrix_inputs
from nlgscore.serve.service import Job, Service


async def matrix(request: Any, service: Service) -> Any:
    """Every prediction scored against every reference (rows: predictions)."""
    service.ready()  # 503 before the body is read
    predictions, references, column, source = matrix_inputs(
        await service.read_json(request), service.settings.max_matrix_cells
    )
    grid = await service.score(Job(predictions, references, matrix=True, column=column, source=source), request)
    return JSONResponse({"matrix": grid.tolist(), "column": column, "signature": str(service.scorer.signature)})
