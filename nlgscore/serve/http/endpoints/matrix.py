"""``POST /v1/matrix``: ``{"predictions", "references", "column"?, "source"?}`` → ``{"matrix", "column", "signature"}``."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import matrix_inputs


async def matrix(request: Any, gate: Gate) -> Any:
    """Every prediction scored against every reference (rows: predictions)."""
    gate.ready()  # 503 before the body is read
    predictions, references, column, source = matrix_inputs(
        await gate.read_json(request), gate.settings.max_matrix_cells
    )
    grid = await gate.score(Job(predictions, references, matrix=True, column=column, source=source), request)
    return JSONResponse({"matrix": grid.tolist(), "column": column, "signature": str(gate.scorer.signature)})
