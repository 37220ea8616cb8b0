"""The ``nlgscore serve`` app on Ray Serve: replicas behind one endpoint, batched with ``@serve.batch``.

:func:`deployment` returns a Ray Serve application (``serve.run(app, route_prefix="/")``) whose
replicas each load the scorer once and serve the same app as ``nlgscore serve``
(:func:`nlgscore.serve.app.create_app`: ``/health``, ``/v1/score``, ``/get_reward``,
``/v1/matrix``, ``/metrics``, the same bodies and refusals) through ``@serve.ingress``. Ray's HTTP
proxy spreads the requests over the replicas; inside a replica the concurrent requests are merged
by Ray Serve's ``@serve.batch`` (:class:`ServeBatcher`: up to ``max_batch`` predictions, waiting
at most ``max_wait_ms``) into one ``compute``, with the micro-batcher's per-call checks and its
rule that a bad call fails alone. ``num_replicas`` fixes the replica count; ``autoscaling_config``
(Ray's dict or ``AutoscalingConfig``: ``min_replicas``, ``max_replicas``,
``target_ongoing_requests`` ...) is passed to Ray as is.

A replica that dies (its process killed, its node lost) is replaced by Ray Serve; a request it
was scoring fails at the proxy (HTTP 500) and is sent again by the client:
:class:`~nlgscore.serve.client.RemoteScorer` retries with backoff, and scoring is idempotent, so
each request's scores come back once, in order. ``nlgscore serve SPEC --ray --replicas N`` runs
:func:`run` (a local Ray instance, or the cluster named by ``RAY_ADDRESS``).
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set

from nlgscore.core.errors import ArgumentError, ArgumentTypeError
from nlgscore.core.extras import require
from nlgscore.core.microbatch import MicroBatcher, QueueFullError, QueuedCall

serve = require("ray.serve", "ray", "a Ray Serve deployment")

DEFAULT_APP_NAME = "nlgscore"


class ServeBatcher(MicroBatcher):
    """A :class:`~nlgscore.core.microbatch.MicroBatcher` whose queue is Ray Serve's ``@serve.batch``.

    Same constructor, ``submit`` and ``submit_call``; calls are checked when submitted (a bad call fails alone,
    before it joins a batch), then wait in ``@serve.batch``'s queue on the replica's event loop
    (``max_batch`` counts predictions, as in the micro-batcher); a batch is scored in a worker
    thread, grouped by what may be merged, with the micro-batcher's merge and split. A call of
    more than ``max_batch`` predictions is scored alone.
    """

    def __init__(self, scorer: Any, **settings: Any) -> None:
        super().__init__(scorer, **settings)
        self._tasks: Set[Any] = set()
        ServeBatcher._batched.set_max_batch_size(self.max_batch)  # type: ignore[attr-defined]
        ServeBatcher._batched.set_batch_wait_timeout_s(self.max_wait_ms / 1000.0)  # type: ignore[attr-defined]

    def submit_call(self, call: Any, deadline: Optional[float] = None) -> Any:
        """Queue one checked call from a coroutine on the replica's event loop; a ``Future`` of its answer."""
        job = QueuedCall(call, deadline)
        loop = asyncio.get_running_loop()  # @serve.batch's queue lives on the replica's loop
        with self._cond:
            if self._closing:
                raise RuntimeError("this ServeBatcher is closed")
            if self._queued and self._queued + job.size > self.max_queue:
                raise QueueFullError(f"{self._queued} predictions are waiting (max_queue={self.max_queue}); retry later")
            self._queued += job.size
        task = loop.create_task(self._enqueue(job))
        self._tasks.add(task)  # a reference until it is done (the loop keeps only weak ones)
        task.add_done_callback(self._tasks.discard)
        return job.future

    async def _enqueue(self, job: Any) -> None:
        try:
            if job.size > self.max_batch or job.call.merge_key is None:
                await asyncio.to_thread(self._run, [job])
            else:
                await self._batched(job)
        except BaseException as err:  # never leave a caller waiting
            if not job.future.done():
                job.future.set_exception(err)
            raise

    @serve.batch(max_batch_size=64, batch_wait_timeout_s=0.005, batch_size_fn=lambda jobs: sum(job.size for job in jobs))
    async def _batched(self, jobs: List[Any]) -> List[None]:
        """Ray Serve's batch handler: the waiting calls, scored together (results go to their futures)."""
        await asyncio.to_thread(self._run, jobs)
        return [None] * len(jobs)

    def _run(self, jobs: List[Any]) -> None:
        with self._cond:
            self._queued -= sum(job.size for job in jobs)
        groups: Dict[Any, List[Any]] = {}
        for job in jobs:  # only calls with equal keys merge (a per-call idf never does)
            groups.setdefault(next((key for key in groups if key is job.key or key == job.key), job.key), []).append(job)
        now = time.monotonic()
        for group in groups.values():
            running = [job for job in group if job.live(now)]  # a timed-out or cancelled call is dropped
            with self._scoring:
                self._score(running)


class NlgscoreReplica:
    """One replica: the scorer, loaded once in the constructor (the replica takes no traffic
    until it is loaded), and the ``nlgscore serve`` app over it with a :class:`ServeBatcher`."""

    def __init__(self, spec: str, options: Dict[str, Any], app_options: Dict[str, Any]) -> None:
        from nlgscore.registry import build

        self.scorer = build(spec, **options)
        self.app_options = app_options

    def __serve_build_asgi_app__(self) -> Any:
        from nlgscore.serve.app import create_app

        return create_app(self.scorer, make_batcher=ServeBatcher, **self.app_options)


def deployment(
    spec: str,
    *,
    num_replicas: Optional[int] = None,
    autoscaling_config: Any = None,
    max_batch: Optional[int] = None,
    max_wait_ms: Optional[float] = None,
    ray_actor_options: Optional[Dict[str, Any]] = None,
    max_ongoing_requests: Optional[int] = None,
    name: str = DEFAULT_APP_NAME,
    app_options: Optional[Dict[str, Any]] = None,
    **options: Any,
) -> Any:
    """The Ray Serve application serving ``spec``: ``serve.run(deployment(spec, num_replicas=2), route_prefix="/")``.

    ``options`` go to :func:`nlgscore.registry.build` in each replica (``num_layers=``,
    ``device=`` ...); ``max_batch``/``max_wait_ms`` set ``@serve.batch``; ``app_options`` are the
    other keywords of :func:`~nlgscore.serve.app.create_app` (``max_queue``, ``timeout``,
    ``api_key``, ``max_items`` ...); ``ray_actor_options`` (e.g. ``{"num_cpus": 0.5}`` or
    ``{"num_gpus": 1}``), ``max_ongoing_requests``, ``num_replicas`` and ``autoscaling_config``
    go to Ray Serve as they are. Everything is checked here, before any replica starts.

    >>> app = deployment("bertscore:minilm", num_replicas=2, max_batch=32, ray_actor_options={"num_cpus": 0.5})
    >>> type(app).__name__
    'Application'
    >>> deployment("bertscore:minilm", num_replicas=2, autoscaling_config={"max_replicas": 4})
    Traceback (most recent call last):
    ...
    nlgscore.core.errors.ArgumentError: pass num_replicas or autoscaling_config, not both
    """
    from nlgscore import registry
    from nlgscore.serve.app import create_app

    if not isinstance(spec, str):
        raise ArgumentTypeError(f"spec must be a metric spec string such as 'bertscore:minilm', got {type(spec).__name__}")
    metric_name, _ = registry.parse_spec(spec)  # an unknown metric fails here, listing the known ones
    if num_replicas is not None and autoscaling_config is not None:
        raise ArgumentError("pass num_replicas or autoscaling_config, not both")
    app_options = dict(app_options or {})
    for key, value in (("max_batch", max_batch), ("max_wait_ms", max_wait_ms)):
        if value is not None:
            app_options[key] = value
    create_app(lambda: None, **app_options)  # checks every app setting now (nothing is loaded)
    options = dict(options)
    options.setdefault("progress", False)  # one bar per merged batch would be noise
    if getattr(registry.metric(metric_name).scorer_class(), "caches_embeddings", False):
        options.setdefault("cache_references", True)  # the G rollouts of a GRPO prompt share one reference
    settings: Dict[str, Any] = {"name": name}
    if autoscaling_config is not None:
        settings["autoscaling_config"] = autoscaling_config
    else:
        settings["num_replicas"] = 1 if num_replicas is None else num_replicas
    if ray_actor_options is not None:
        settings["ray_actor_options"] = ray_actor_options
    if max_ongoing_requests is not None:
        settings["max_ongoing_requests"] = max_ongoing_requests
    replica = serve.deployment(serve.ingress()(NlgscoreReplica))
    return replica.options(**settings).bind(spec, options, app_options)


def replica_names(app_name: str = DEFAULT_APP_NAME) -> List[str]:
    """The Ray actor names of the application's live replicas (namespace ``"serve"``)."""
    import ray

    prefix = f"SERVE_REPLICA::{app_name}#"
    return sorted(actor["name"] for actor in ray.util.list_named_actors(all_namespaces=True) if actor["name"].startswith(prefix))


def run(spec: str, host: str, port: int, *, on_ready: Optional[Callable[[], None]] = None, **kwargs: Any) -> int:
    """``nlgscore serve SPEC --ray``: deploy on Ray (local, or ``RAY_ADDRESS``) and serve until
    SIGTERM or Ctrl-C, then shut Serve down (and Ray, if started here); returns 0."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False, log_to_driver=False)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": host, "port": port})
        serve.run(deployment(spec, **kwargs), name=kwargs.get("name", DEFAULT_APP_NAME), route_prefix="/", blocking=False)
        if on_ready is not None:
            on_ready()
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        serve.shutdown()
        if started:
            ray.shutdown()
    return 0
