"""The backend that scores in this process: the scorer, its micro-batcher, ROLL's tasks and the
server's metrics (:class:`InProcess`). The one-process server's gate talks to it, and so does the
model process of ``--workers`` (:mod:`nlgscore.serve.workers.model_process`), so every rule of a
call holds the same in both: a job becomes one checked call (``make_call``: the argument checks
and their messages), ``--max-queue`` and the reference cap are counted here, a call whose client
left is dropped before it is scored.

>>> backend = InProcess(Settings())
>>> backend.check_ready()
Traceback (most recent call last):
...
nlgscore.serve.http.protocol.HTTPError: the model is loading
"""

from __future__ import annotations

import asyncio
import datetime
import time
import uuid
from typing import Any, Dict, List, Optional, Tuple

from nlgscore.core.call import CallCancelled
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import NlgscoreError
from nlgscore.scheduler.microbatch import MicroBatcher, QueueFullError
from nlgscore.serve.http.gate import RETRY_AFTER, Drain, Job, Settings, until_disconnected
from nlgscore.serve.http.metrics import ServerMetrics, scorer_counters
from nlgscore.serve.http.protocol import HTTPError, request_options

__all__ = ["InProcess", "Task"]


class Task:
    """One ROLL sample: the asyncio task scoring it, then its answer."""

    def __init__(self) -> None:
        self.started = datetime.datetime.now().isoformat()
        self.finished_at = 0.0
        self.answer: Dict[str, Any] = {}
        self.runner: Any = None  # the asyncio task, referenced so that it is never collected


class InProcess:
    """The scorer and its batcher in this process, once :meth:`loaded` (see the module docstring)."""

    def __init__(self, settings: Settings, metrics: Optional[ServerMetrics] = None) -> None:
        self.settings = settings
        self.scorer: Any = None
        self.batcher: Optional[MicroBatcher] = None
        self.error: Optional[BaseException] = None
        self.tasks: Dict[str, Task] = {}  # ROLL's submitted tasks, bounded by max_queue
        self.metrics = metrics or ServerMetrics(
            lambda: self.batcher.queued if self.batcher is not None else 0,
            lambda: self.active,
            telemetry=lambda: scorer_counters(self.scorer),
            scheduler_drops=lambda: getattr(self.batcher, "dropped", {}),
        )
        self.active = 0  # requests in the server, as the gate counts them (the metrics' in-flight gauge)

    def loaded(self, scorer: ScorerLike, batcher: MicroBatcher) -> None:
        """The scorer is ready: calls are scored from now on."""
        self.batcher, self.scorer = batcher, scorer

    def failed(self, error: BaseException) -> None:
        """The scorer could not load: every request is told why."""
        self.error = error

    # -- the Backend's faces ------------------------------------------------------------------
    def check_ready(self) -> None:
        if self.error is not None:
            raise HTTPError(503, f"the scorer failed to load: {type(self.error).__name__}: {self.error}")
        if self.batcher is None:
            raise HTTPError(503, "the model is loading", {"Retry-After": RETRY_AFTER})

    def facts(self) -> Any:
        self.check_ready()
        return self.scorer

    def request_options(self) -> Dict[str, List[str]]:
        return request_options(type(self.facts()))

    def checked_call(self, job: Job) -> Any:
        """The job as one checked call (``make_call`` or ``make_matrix_call``: their argument
        errors name the field); 413 above ``max_items`` references; 503 unless ready."""
        scorer = self.facts()
        references = (
            0
            if job.matrix or job.references is None
            else sum(len(r) if isinstance(r, list) else 1 for r in job.references)
        )
        if references > self.settings.max_items:  # one prediction with 60,000 references is 60,000 pairs of work
            raise HTTPError(
                413,
                f"{references} references; this server takes at most {self.settings.max_items} per request (--max-items)",
            )
        if job.matrix:
            return scorer.make_matrix_call(job.predictions, job.references, source=job.source, column=job.column)
        call = scorer.make_call(job.predictions, job.references, job.sources, **job.options)
        call.token_ids = job.tokens
        return call

    async def score(self, job: Job, client: Any, drain: Drain) -> Any:
        """The job as one checked call on the batcher's queue, so pairs and matrices share one
        scheduler and nothing borrows a lock. A full queue is 429 (with Retry-After); 504 past the
        timeout, 499 as soon as the ``client`` (the Starlette request, its body read) disconnects:
        a queued call is then never scored and a running call stops between its batches. The time
        spent queued and the time spent computing are recorded apart."""
        call = self.checked_call(job)
        batcher = self.batcher
        assert batcher is not None  # checked_call checked it
        arrived = time.perf_counter()
        metrics = self.metrics
        timeout = self.settings.timeout
        try:
            gone = None if client is None else (lambda: until_disconnected(client))
            return await batcher.run_call(
                call, timeout, gone, watch=lambda future: metrics.watch_queue(future, arrived), stop=drain.signal()
            )
        except QueueFullError as err:
            raise HTTPError(429, str(err), {"Retry-After": RETRY_AFTER}) from None
        except TimeoutError:
            raise HTTPError(504, f"not scored within {timeout:g} s (--timeout)") from None
        except CallCancelled:
            if drain.cut:
                raise drain.refusal() from None
            raise HTTPError(499, "the client disconnected before its call was scored") from None

    async def health(self, drain: Drain) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
        try:
            self.check_ready()
            if drain.draining:
                raise HTTPError(503, "the server is shutting down", {"Retry-After": RETRY_AFTER})
        except HTTPError as err:
            status = "error" if self.error is not None else "draining" if drain.draining else "loading"
            return 503, {"status": status, "error": str(err)}, err.headers
        return 200, {**self.info(), "matrix": True}, {}

    def info(self) -> Dict[str, Any]:
        """The loaded scorer as ``/health`` reports it."""
        scorer = self.scorer
        return {
            "status": "ok",
            "metric": scorer.name,
            "signature": str(scorer.signature),
            "queue": self.batcher.queued if self.batcher is not None else 0,
            "needs": list(scorer.needs),
        }

    async def exposition(self) -> Tuple[Any, str]:
        return self.metrics.exposition(), self.metrics.content_type

    async def hold(self, job: Job, drain: Drain) -> str:
        """Queue a ROLL sample for scoring now; its key (429 above ``max_queue`` tasks held)."""
        self.purge_tasks()
        if len(self.tasks) >= self.settings.max_queue:
            raise HTTPError(
                429,
                f"{len(self.tasks)} tasks are held (--max-queue); poll or retry later",
                {"Retry-After": RETRY_AFTER},
            )
        key = uuid.uuid4().hex
        task = self.tasks[key] = Task()
        task.runner = asyncio.get_running_loop().create_task(self._run_task(task, job, drain))
        return key

    async def _run_task(self, task: Task, job: Job, drain: Drain) -> None:
        """Score ``job`` and keep the answer on ``task`` (errors included: the poller is told)."""
        try:
            result = await self.score(job, None, drain)
            task.answer = {
                "errcode": 0,
                "errmsg": "",
                "reward_score": float(result.scores[0]),
                "dimention_reward_score": {
                    name: {"score": float(values[0])} for name, values in result.columns().items()
                },
            }
        except HTTPError as err:
            task.answer = {"errcode": err.status, "errmsg": str(err)}
        except NlgscoreError as err:  # the argument checks of compute, naming the item
            task.answer = {"errcode": 400, "errmsg": str(err)}
        except Exception as err:  # the poller is told, never left waiting
            task.answer = {"errcode": 500, "errmsg": f"{type(err).__name__}: {err}"}
        task.answer.update(start_time=task.started, end_time=datetime.datetime.now().isoformat())
        task.finished_at = time.monotonic()

    def purge_tasks(self) -> None:
        """Forget the tasks finished more than ``task_ttl`` seconds ago."""
        now = time.monotonic()
        ttl = self.settings.task_ttl
        for key in [k for k, t in self.tasks.items() if t.finished_at and now - t.finished_at > ttl]:
            del self.tasks[key]

    async def poll(self, key: Any) -> Tuple[str, Any]:
        self.purge_tasks()
        task = self.tasks.get(key) if isinstance(key, str) else None
        if task is None:
            return "unknown", None
        if not task.finished_at:
            return "running", None
        del self.tasks[key]
        return "done", task.answer

    async def held(self) -> int:
        return len(self.tasks)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.metrics.observe_request(endpoint, status, seconds)

    def in_flight(self, own: int) -> int:
        return own

    def set_in_flight(self, own: int) -> None:
        self.active = own

    def running(self) -> bool:
        return self.batcher is not None and bool(self.batcher.running)
