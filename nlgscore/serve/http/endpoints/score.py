"""``POST /v1/score``: ``{"predictions", "references"?, "sources"?, "context"?, "doc_ids"?}`` and
the metric's per-request options (BARTScore's ``prompt``...) → ``{"scores", "columns", "signature", "primary"}``."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import call_options, context_options, score_inputs, score_response


async def score(request: Any, gate: Gate) -> Any:
    """The scores of the pairs in the body, in order."""
    body = await gate.read_json(request)
    options = gate.request_options()
    predictions, references, sources = score_inputs(body, gate.settings.max_items, options)
    given = {**context_options(body, gate.settings.max_items), **call_options(body, options)}
    job = Job(predictions, references, sources, options=given)
    return JSONResponse(score_response(await gate.score(job, request)))
