"""``POST /get_reward``: OpenRLHF's reward-model protocol (``--remote_rm_url http://HOST:PORT/get_reward``).

``{"query": [...], "prompts": [...], "labels": [...]}`` → ``{"rewards", "scores", "extra_logs"}``;
each response is its query after its prompt, the labels are the references, a source-based metric
reads the prompt (:func:`nlgscore.serve.http.protocol.reward_inputs`).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import reward_inputs, reward_response


async def get_reward(request: Any, gate: Gate) -> Any:
    """OpenRLHF's rewards for a batch of queries."""
    responses, labels, prompts = reward_inputs(await gate.read_json(request), gate.settings.max_items)
    return JSONResponse(reward_response(await gate.score(Job(responses, labels, prompts), request), gate.scorer.name))
