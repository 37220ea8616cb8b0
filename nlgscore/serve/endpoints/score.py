"""``POST /v1/score``: ``{"predictions", "references"?, "sources"?, "context"?, "doc_ids"?}`` and
the metric's per-request options (BARTScore's ``prompt``...) → ``{"scores", "columns", "signature", "primary"}``."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.protocol import call_options, context_options, score_inputs, score_response
from nlgscore.serve.service import Job, Service


async def score(request: Any, service: Service) -> Any:
    """The scores of the pairs in the body, in order."""
    body = await service.read_json(request)
    options = service.request_options()
    predictions, references, sources = score_inputs(body, service.settings.max_items, options)
    given = {**context_options(body, service.settings.max_items), **call_options(body, options)}
    job = Job(predictions, references, sources, options=given)
    return JSONResponse(score_response(await service.score(job, request)))
