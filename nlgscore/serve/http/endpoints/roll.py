"""ROLL's remote reward system: ``POST /roll/submit_task``, then ``GET /roll/task_result``.

ROLL's ``RemoteRewardSystemWorker`` (``roll/pipeline/rlvr/rewards/remote_reward_system_worker.py``)
posts each sample to ``submit_url`` (``{"prompt", "response", "reward_info": {"ground_truth"},
"data_id", "rollout_id", ...}``), reads ``reward_request_id`` when ``errcode`` is 0, then polls
``get_result_url`` (a GET whose JSON body is ``{"reward_request_id"}``; a query string
``?reward_request_id=...`` is read as well) until ``errcode`` is 0
(``reward_score``, ``dimention_reward_score``; 1 means still running). Here a submitted task is
scored through the server's queue at once, so the samples of many ROLL threads share batches.
Results wait at most ``--task-ttl`` seconds for their poll (they can be polled while the server
drains), and at most ``max_queue`` tasks are
held (429 above: ROLL retries a submit).
"""

from __future__ import annotations

from typing import Any, Dict

from starlette.responses import JSONResponse

from nlgscore.serve.http.gate import Gate, Job
from nlgscore.serve.http.protocol import HTTPError, message_text, reference


def task_job(body: Dict[str, Any]) -> Job:
    """The sample of a submit body as a Job (a 400 naming the field if malformed)."""
    if not isinstance(body.get("response"), str):
        raise HTTPError(400, f"response must be a string, got {type(body.get('response')).__name__}")
    info = body.get("reward_info")
    if not isinstance(info, dict) or "ground_truth" not in info:
        raise HTTPError(400, "reward_info must be an object with ground_truth (the reference)")
    return Job(
        [body["response"]],
        [reference(info["ground_truth"], "reward_info.ground_truth")],
        [message_text(body.get("prompt"), "prompt")],
    )


async def poll_key(request: Any, gate: Gate) -> Any:
    """The ``reward_request_id`` of a poll: from the query string, else ROLL's JSON body."""
    key = request.query_params.get("reward_request_id")
    if key is None:  # ROLL's own poll: a GET with a JSON body
        key = (await gate.read_json(request)).get("reward_request_id")
    return key


async def submit_task(request: Any, gate: Gate) -> Any:
    """``{"errcode": 0, "reward_request_id"}``: the sample is queued for scoring."""
    gate.ready()
    key = await gate.hold(task_job(await gate.read_json(request)))
    return JSONResponse({"errcode": 0, "errmsg": "", "reward_request_id": key})


async def task_result(request: Any, gate: Gate) -> Any:
    """``errcode`` 0 with the reward (the task is then forgotten), 1 while it runs, 404 unknown."""
    key = await poll_key(request, gate)
    state, answer = await gate.poll(key)
    if state == "unknown":
        raise HTTPError(
            404, f"no task {key!r} (unknown, already read, or older than --task-ttl {gate.settings.task_ttl:g} s)"
        )
    if state == "running":
        return JSONResponse({"errcode": 1, "errmsg": "running"})
    return JSONResponse(answer)
