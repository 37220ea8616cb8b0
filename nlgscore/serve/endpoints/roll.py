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

import asyncio
import datetime
import time
import uuid
from typing import Any, Dict

from starlette.responses import JSONResponse

from nlgscore.errors import NlgscoreError
from nlgscore.serve.protocol import HTTPError, message_text, reference
from nlgscore.serve.service import RETRY_AFTER, Job, Service


class Task:
    """One submitted sample: the asyncio task scoring it, then its answer."""

    def __init__(self) -> None:
        self.started = datetime.datetime.now().isoformat()
        self.finished_at = 0.0
        self.answer: Dict[str, Any] = {}
        self.runner: Any = None  # the asyncio task, referenced so that it is never collected


async def run_task(service: Service, task: Task, job: Job) -> None:
    """Score ``job`` through ``service.score`` and keep the answer on ``task`` (errors included)."""
    try:
        result = await service.score(job)
        task.answer = {
            "errcode": 0,
            "errmsg": "",
            "reward_score": float(result.scores[0]),
            "dimention_reward_score": {name: {"score": float(values[0])} for name, values in result.columns().items()},
        }
    except HTTPError as err:
        task.answer = {"errcode": err.status, "errmsg": str(err)}
    except NlgscoreError as err:  # the argument checks of compute, naming the item
        task.answer = {"errcode": 400, "errmsg": str(err)}
    except Exception as err:  # the poller is told, never left waiting
        task.answer = {"errcode": 500, "errmsg": f"{type(err).__name__}: {err}"}
    task.answer.update(start_time=task.started, end_time=datetime.datetime.now().isoformat())
    task.finished_at = time.monotonic()


def purge_tasks(tasks: Dict[str, Task], ttl: float) -> None:
    """Forget the tasks finished more than ``ttl`` seconds ago."""
    now = time.monotonic()
    for key in [k for k, t in tasks.items() if t.finished_at and now - t.finished_at > ttl]:
        del tasks[key]


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


async def poll_key(request: Any, service: Any) -> Any:
    """The ``reward_request_id`` of a poll: from the query string, else ROLL's JSON body."""
    key = request.query_params.get("reward_request_id")
    if key is None:  # ROLL's own poll: a GET with a JSON body
        key = (await service.read_json(request)).get("reward_request_id")
    return key


async def submit_task(request: Any, service: Service) -> Any:
    """``{"errcode": 0, "reward_request_id"}``: the sample is queued for scoring."""
    service.ready()
    job = task_job(await service.read_json(request))
    tasks = service.tasks
    purge_tasks(tasks, service.settings.task_ttl)
    if len(tasks) >= service.settings.max_queue:
        raise HTTPError(
            429, f"{len(tasks)} tasks are held (--max-queue); poll or retry later", {"Retry-After": RETRY_AFTER}
        )
    key = uuid.uuid4().hex
    task = tasks[key] = Task()
    task.runner = asyncio.get_running_loop().create_task(run_task(service, task, job))
    return JSONResponse({"errcode": 0, "errmsg": "", "reward_request_id": key})


async def task_result(request: Any, service: Service) -> Any:
    """``errcode`` 0 with the reward (the task is then forgotten), 1 while it runs, 404 unknown."""
    key = await poll_key(request, service)
    purge_tasks(service.tasks, service.settings.task_ttl)
    task = service.tasks.get(key) if isinstance(key, str) else None
    if task is None:
        raise HTTPError(
            404, f"no task {key!r} (unknown, already read, or older than --task-ttl {service.settings.task_ttl:g} s)"
        )
    if not task.finished_at:
        return JSONResponse({"errcode": 1, "errmsg": "running"})
    del service.tasks[key]
    return JSONResponse(task.answer)
