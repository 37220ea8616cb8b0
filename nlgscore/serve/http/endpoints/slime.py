"""``POST /v1/reward``: slime's remote reward model (``--rm-type remote_rm --rm-url http://HOST:PORT/v1/reward``).

slime 0.x posts ``{"prompt", "response", "label"}`` for one sample and takes the JSON answer as
the reward (``slime/rollout/rm_hub/__init__.py``, ``remote_rm``): the answer is a bare JSON number.
A JSON array of such objects (a group: :func:`nlgscore.integrations.slime.group_rm` under
``--group-rm``) is answered with an array of numbers, in order, scored in one call. The response
is the prediction, the label its reference (a string or a list of strings); a source-based
metric reads the prompt (a string, or chat messages: the last user message).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import HTTPError, message_text, reference

FIELDS = ("prompt", "response", "label")


def samples(body: Any, max_items: int) -> Tuple[List[str], List[Any], List[str], bool]:
    """Responses, labels, prompts of a sample or a group, and whether it was a group."""
    group = isinstance(body, list)
    items: List[Any] = body if group else [body]
    if group and not items:
        raise HTTPError(400, "the group is empty: post at least one {prompt, response, label}")
    if len(items) > max_items:
        raise HTTPError(
            413, f"the group has {len(items)} samples; this server takes at most {max_items} per request (--max-items)"
        )
    responses, labels, prompts = [], [], []
    for i, item in enumerate(items):
        where = f"[{i}]." if group else ""
        if not isinstance(item, dict):
            raise HTTPError(
                400, f"sample {i} must be a JSON object with {', '.join(FIELDS)}, got {type(item).__name__}"
            )
        sample: Dict[str, Any] = item
        if not isinstance(sample.get("response"), str):
            raise HTTPError(400, f"{where}response must be a string, got {type(sample.get('response')).__name__}")
        responses.append(sample["response"])
        labels.append(reference(sample.get("label"), f"{where}label"))
        prompts.append(message_text(sample.get("prompt"), f"{where}prompt"))
    return responses, labels, prompts, group


async def slime_reward(request: Any, gate: Gate) -> Any:
    """A bare JSON number (one sample) or an array of numbers (a group)."""
    responses, labels, prompts, group = samples(await gate.read_json(request, arrays=True), gate.settings.max_items)
    result = await gate.score(Job(responses, labels, prompts), request)  # a metric reads what it needs
    scores = [float(s) for s in result.scores]
    return JSONResponse(scores if group else scores[0])
