"""``POST /get_reward``: OpenRLHF's reward-model protocol (``--remote_rm_url http://HOST:PORT/get_reward``).

``{"query": [...], "prompts": [...], "labels": [...]}`` → ``{"rewards", "scores", "extra_logs"}``;
each response is its query after its prompt, the labels are the references, a source-based metric
reads the prompt (:func:`nlgscore.serve.protocol.reward_inputs`).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.protocol import reward_inputs, reward_response
from nlgscore.serve.service import Job, Service


async def get_reward(request: Any, service: Service) -> Any:
    """OpenRLHF's rewards for a batch of queries."""
    responses, labels, prompts = reward_inputs(await service.read_json(request), service.settings.max_items)
    return JSONResponse(
        reward_response(await service.score(Job(responses, labels, prompts), request), service.scorer.name)
    )
