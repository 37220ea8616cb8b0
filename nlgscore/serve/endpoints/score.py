"""``POST /v1/score``: ``{"predictions", "references"?, "sources"?}`` → ``{"scores", "columns", "signature", "primary"}``."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.protocol import score_inputs, score_response
from nlgscore.serve.service import Job, Service


async def score(request: Any, service: Service) -> Any:
    """The scores of the pairs in the body, in order."""
    predictions, references, sources = score_inputs(await service.read_json(request), service.settings.max_items)
    return JSONResponse(score_response(await service.score(Job(predictions, references, sources), request)))
