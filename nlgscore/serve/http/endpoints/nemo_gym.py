"""A NeMo Gym resources server: ``POST /seed_session`` and ``POST /verify``.

NeMo Gym's agent (``responses_api_agents/simple_agent/app.py``) posts the task row to the
resources server's ``/seed_session``, runs the policy, then posts the row with the policy's
``response`` to ``/verify`` and reads ``reward`` from the answer. The request is a
``BaseVerifyRequest`` (``nemo_gym/base_resources_server.py``): ``responses_create_params``
(``input``: a string or messages) and ``response`` (an OpenAI Responses object, whose
``output_text`` is the text of its ``output_text`` parts), plus the task's own fields, here
``expected_answer``: the reference (a string or a list). The answer is a ``BaseVerifyResponse``:
the request with ``reward`` (the primary score) added. A source-based metric reads the input's
last user message.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import HTTPError, message_text, reference

REFERENCE_FIELD = "expected_answer"


def output_text(response: Any) -> str:
    """The text of a Responses object, as ``openai.types.responses.Response.output_text`` joins it.

    >>> output_text({"output": [{"type": "message", "content": [{"type": "output_text", "text": "4"}]}]})
    '4'
    """
    output = response.get("output") if isinstance(response, dict) else None
    if not isinstance(output, list):
        raise HTTPError(400, f"response must be a Responses object with an output list, got {type(response).__name__}")
    texts = []
    for i, item in enumerate(output):
        if isinstance(item, dict) and item.get("type") == "message":
            content = item.get("content")
            if not isinstance(content, list):
                raise HTTPError(
                    400, f"response.output[{i}].content must be a list of content parts, got {type(content).__name__}"
                )
            for k, part in enumerate(content):
                if isinstance(part, dict) and part.get("type") == "output_text":
                    if not isinstance(part.get("text"), str):
                        raise HTTPError(
                            400,
                            f"response.output[{i}].content[{k}].text must be a string, got {type(part.get('text')).__name__}",
                        )
                    texts.append(part["text"])
    return "".join(texts)


def verify_inputs(body: Dict[str, Any]) -> Tuple[str, Any, str]:
    """The prediction, the reference and the source of a ``/verify`` body."""
    params = body.get("responses_create_params")
    if not isinstance(params, dict):
        raise HTTPError(400, f"responses_create_params must be an object, got {type(params).__name__}")
    if REFERENCE_FIELD not in body:
        raise HTTPError(400, f"{REFERENCE_FIELD} is required (the reference of this task row)")
    return (
        output_text(body.get("response")),
        reference(body[REFERENCE_FIELD], REFERENCE_FIELD),
        message_text(params.get("input"), "responses_create_params.input"),
    )


async def seed_session(request: Any, gate: Gate) -> Any:
    """Nothing to set up per rollout: ``{}`` (a ``BaseSeedSessionResponse``)."""
    await gate.read_json(request)
    return JSONResponse({})


async def verify(request: Any, gate: Gate) -> Any:
    """The request with ``reward`` added (a ``BaseVerifyResponse``)."""
    body = await gate.read_json(request)
    prediction, ref, source = verify_inputs(body)
    result = await gate.score(Job([prediction], [ref], [source]), request)
    return JSONResponse({**body, "reward": float(result.scores[0])})
