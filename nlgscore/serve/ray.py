"""The ``nlgscore serve`` app on Ray Serve: replicas behind one endpoint, batched with ``@serve.batch``.

:func:`deployment` returns a Ray Serve application (``serve.run(app, route_prefix="/")``) whose
replicas each load the scorer once and serve the same app as ``nlgscore serve``
(:func:`nlgscore.serve.http.app.create_app`: ``/health``, ``/v1/score``, ``/get_reward``,
``/v1/matrix``, ``/metrics``, the same bodies and refusals) through ``@serve.ingress``. Ray's HTTP
proxy spreads the requests over the replicas; inside a replica the concurrent requests are merged
by Ray Serve's ``@serve.batch`` (:class:`ServeBatcher`: up to ``max_batch`` predictions, waiting
at most ``max_wait_ms``) into one ``compute``, with the micro-batcher's per-call checks and its
rule that a bad call fails alone. ``num_replicas`` fixes the replica count; ``autoscaling_config``
(Ray's dict or ``AutoscalingConfig``: ``min_replicas``, ``max_replicas``,
``target_ongoing_requests`` ...) is passed to Ray as is.

A replica that dies (its process killed, its node lost) is replaced by Ray Serve; a request it
was scoring fails at the proxy (HTTP 500) and is sent again by the client:
:class:`~nlgscore.remote.client.RemoteScorer` retries with backoff, and scoring is idempotent, so
each request's scores come back once, in order. ``nlgscore serve SPEC --ray --replicas N`` runs
:func:`run` (a local Ray instance, or the cluster named by ``RAY_ADDRESS``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import threading
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Set

from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.scheduler.microbatch import MicroBatcher, QueueFullError
from nlgscore.scheduler.queued_call import QueuedCall
from nlgscore.serve.http.gate import Settings
from nlgscore.serve.http.server import DEFAULT_DRAIN_TIMEOUT

serve = require("ray.serve", "ray", "a Ray Serve deployment")

DEFAULT_APP_NAME = "nlgscore"
logger = logging.getLogger(__name__)


class ServeBatcher(MicroBatcher):
    """A :class:`~nlgscore.scheduler.microbatch.MicroBatcher` whose queue is Ray Serve's ``@serve.batch``.

    Same constructor, ``submit`` and ``submit_call``; calls are checked when submitted (a bad call fails alone,
    before it joins a batch), then wait in ``@serve.batch``'s queue on the replica's event loop
    (``max_batch`` counts predictions, as in the micro-batcher); a batch is scored in a worker
    thread, grouped by what may be merged, with the micro-batcher's merge and split. A call of
    more than ``max_batch`` predictions is scored alone.
    """

    def __init__(self, scorer: ScorerLike, **settings: Any) -> None:
        super().__init__(scorer, **settings)
        self._tasks: Set[Any] = set()
        ServeBatcher._batched.set_max_batch_size(self.max_batch)
        ServeBatcher._batched.set_batch_wait_timeout_s(self.max_wait_ms / 1000.0)

    def submit_call(self, call: Any, deadline: Optional[float] = None) -> Any:
        """Queue one checked call from a coroutine on the replica's event loop; a ``Future`` of its answer."""
        job = QueuedCall(call, deadline)
        loop = asyncio.get_running_loop()  # @serve.batch's queue lives on the replica's loop
        with self._cond:
            if self._closing:
                raise RuntimeError("this ServeBatcher is closed")
            if self._queued and self._queued + job.size > self.max_queue:
                raise QueueFullError(
                    f"{self._queued} predictions are waiting (max_queue={self.max_queue}); retry later"
                )
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

    @serve.batch(
        max_batch_size=64, batch_wait_timeout_s=0.005, batch_size_fn=lambda jobs: sum(job.size for job in jobs)
    )
    async def _batched(self, jobs: List[Any]) -> List[None]:
        """Ray Serve's batch handler: the waiting calls, scored together (results go to their futures)."""
        await asyncio.to_thread(self._run, jobs)
        return [None] * len(jobs)

    def _run(self, jobs: List[Any]) -> None:
        with self._cond:
            self._queued -= sum(job.size for job in jobs)
        groups: Dict[Any, List[Any]] = {}
        for job in jobs:  # only calls with equal keys merge (a per-call idf never does)
            groups.setdefault(next((key for key in groups if key is job.key or key == job.key), job.key), []).append(
                job
            )
        now = time.monotonic()
        for group in groups.values():
            running = [job for job in group if job.live(now)]  # a timed-out or cancelled call is dropped
            with self._scoring:
                self._score(running)


class NlgscoreReplica:
    """One replica: the scorer, loaded once in the constructor (the replica takes no traffic
    until it is loaded), and the ``nlgscore serve`` app over it with a :class:`ServeBatcher`."""

    def __init__(self, spec: str, options: Dict[str, Any], settings: Settings, api_key: Optional[str]) -> None:
        from nlgscore.registry import build

        self.scorer = build(spec, **options)
        self.settings, self.api_key = settings, api_key

    def __serve_build_asgi_app__(self) -> Any:
        from nlgscore.serve.http.app import create_app

        return create_app(  # the replica's process only serves
            self.scorer, make_batcher=ServeBatcher, freeze_heap=True, settings=self.settings, api_key=self.api_key
        )


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
    other keywords of :func:`~nlgscore.serve.http.app.create_app` (``max_queue``, ``timeout``,
    ``api_key``, ``max_items`` ...); ``ray_actor_options`` (e.g. ``{"num_cpus": 0.5}`` or
    ``{"num_gpus": 1}``), ``max_ongoing_requests``, ``num_replicas`` and ``autoscaling_config``
    go to Ray Serve as they are. Everything is checked here, before any replica starts.

    >>> app = deployment("bertscore:minilm", num_replicas=2, max_batch=32, ray_actor_options={"num_cpus": 0.5})
    >>> type(app).__name__
    'Application'
    >>> deployment("bertscore:minilm", num_replicas=2, autoscaling_config={"max_replicas": 4})
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: pass num_replicas or autoscaling_config, not both
    """
    from nlgscore import registry

    if not isinstance(spec, str):
        raise ArgumentTypeError(
            f"spec must be a metric spec string such as 'bertscore:minilm', got {type(spec).__name__}"
        )
    metric_name, _ = registry.parse_spec(spec)  # an unknown metric fails here, listing the known ones
    if num_replicas is not None and autoscaling_config is not None:
        raise ArgumentError("pass num_replicas or autoscaling_config, not both")
    app_options = dict(app_options or {})
    for key, value in (("max_batch", max_batch), ("max_wait_ms", max_wait_ms)):
        if value is not None:
            app_options[key] = value
    api_key = app_options.pop("api_key", None)
    limits = {spec.name for spec in dataclasses.fields(Settings)}
    others = sorted(set(app_options) - limits)
    if others:
        raise ArgumentError(
            f"app_options takes the server's limits ({', '.join(sorted(limits))}) and api_key, got {others}"
        )
    server_settings = Settings(**app_options)  # every limit checked now, before any replica starts
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
    return replica.options(**settings).bind(spec, options, server_settings, api_key)


def replica_names(app_name: str = DEFAULT_APP_NAME) -> List[str]:
    """The Ray actor names of the application's live replicas (namespace ``"serve"``)."""
    import ray

    prefix = f"SERVE_REPLICA::{app_name}#"
    return sorted(
        actor["name"] for actor in ray.util.list_named_actors(all_namespaces=True) if actor["name"].startswith(prefix)
    )


def run(
    spec: str,
    host: str,
    port: int,
    *,
    on_ready: Optional[Callable[[], None]] = None,
    drain_timeout: Optional[float] = None,
    **kwargs: Any,
) -> int:
    """``nlgscore serve SPEC --ray``: deploy on Ray (local, or ``RAY_ADDRESS``) and serve until
    SIGTERM or Ctrl-C, then shut Serve down (and Ray, if started here); returns 0.

    The replicas' CPUs are checked against the cluster's first (:func:`fit_replicas`). A signal
    stops the start-up too (Serve waits for every replica, for ever if one cannot be placed), and
    the process exits within ``drain_timeout`` seconds of it (:data:`DEFAULT_DRAIN_TIMEOUT`) whatever
    Ray is doing: past it, the processes this one started (a local Ray's) are killed. A second
    signal exits at once.
    """
    import ray

    drain = DEFAULT_DRAIN_TIMEOUT if drain_timeout is None else drain_timeout
    if isinstance(drain, bool) or not isinstance(drain, (int, float)) or not 0 <= drain < float("inf"):
        raise ArgumentError(f"drain_timeout must be a number of seconds >= 0, got {drain_timeout!r}")
    started = not ray.is_initialized()
    stopper = _Stopper(drain)
    previous = {sig: signal.signal(sig, stopper.on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if started:
            ray.init(include_dashboard=False, log_to_driver=False)
            for sig in previous:  # Ray's core replaced them with its own (which aborts, leaving Ray running)
                signal.signal(sig, stopper.on_signal)
        kwargs["ray_actor_options"] = fit_replicas(
            kwargs.get("num_replicas"),
            kwargs.get("autoscaling_config"),
            kwargs.get("ray_actor_options"),
            ray.cluster_resources(),
            strict=started,
        )
        app = deployment(spec, **kwargs)  # every setting checked before Serve starts
        serve.start(http_options={"host": host, "port": port})
        serve.run(app, name=kwargs.get("name", DEFAULT_APP_NAME), route_prefix="/", blocking=False)
        if on_ready is not None:
            on_ready()
        stopper.serving()
    except _Stop:
        pass
    finally:
        stopper.stopping()  # a signal now exits at once
        try:
            if ray.is_initialized():
                serve.shutdown()
        finally:
            if started:
                ray.shutdown()
            stopper.done()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return 0


# Ray counts resources in steps of 1e-4: a share rounded up (2/3 -> 0.6667) would leave a replica unplaced.
_RESOURCE_STEP = 1e-4


class _Stop(BaseException):
    """Raised by the signal handler into a start-up that Ray may never finish."""


class _Stopper:
    """What SIGTERM/SIGINT do in :func:`run`: stop the start-up or the serving, and bound the exit.

    The first signal arms a timer: ``drain`` seconds later the process exits whatever the main
    thread is doing (a Ray call that never returns), after killing the processes it started."""

    def __init__(self, drain: float) -> None:
        self.drain = drain
        self.event = threading.Event()
        self.phase = "starting"
        self.timer: Optional[threading.Timer] = None

    def on_signal(self, signum: int, frame: Any) -> None:
        if self.timer is not None:  # a second signal: no more waiting
            _exit_now(f"{signal.Signals(signum).name} again")
        self.timer = threading.Timer(
            self.drain, _exit_now, (f"Serve and Ray did not stop within the drain timeout ({self.drain:g} s)",)
        )
        self.timer.daemon = True
        self.timer.start()
        self.event.set()
        if self.phase == "starting":
            raise _Stop

    def serving(self) -> None:
        self.phase = "serving"
        while not self.event.wait(0.5):
            pass

    def stopping(self) -> None:
        self.phase = "stopping"
        if self.timer is None:  # an error in the start-up: its clean-up is bounded too
            self.timer = threading.Timer(
                self.drain, _exit_now, (f"Serve and Ray did not stop within {self.drain:g} s",)
            )
            self.timer.daemon = True
            self.timer.start()

    def done(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _exit_now(why: str) -> None:
    """Kill every process this one started (a local Ray: GCS, raylet, workers, replicas) and exit 0."""
    killed = 0
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    logger.warning("%s: killed %d process(es) it started and exited", why, killed)
    logging.shutdown()
    os._exit(0)


def _descendants(root: int) -> List[int]:
    """Pids below ``root``, children first read from ``/proc`` (psutil where there is no ``/proc``)."""
    parents: Dict[int, List[int]] = {}
    if os.path.isdir("/proc/self"):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as handle:
                        ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                parents.setdefault(ppid, []).append(int(entry))
    else:
        try:
            import psutil
        except ImportError:
            return []
        return [child.pid for child in psutil.Process(root).children(recursive=True)]
    found, todo = [], [root]
    while todo:
        for pid in parents.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def fit_replicas(
    num_replicas: Optional[int],
    autoscaling_config: Any,
    ray_actor_options: Optional[Dict[str, Any]],
    cluster: Dict[str, float],
    *,
    strict: bool = True,
) -> Optional[Dict[str, Any]]:
    """``ray_actor_options`` for replicas that fit the ``cluster``'s resources (``ray.cluster_resources()``).

    Ray Serve gives each replica 1 CPU unless ``num_cpus`` says otherwise, and a replica Ray cannot
    place waits for ever while the others serve. Without a ``num_cpus``, replicas that do not fit
    get an equal share of the cluster's CPUs, with a warning (as Ray Data's ``score_dataset``);
    a ``num_cpus`` or ``num_gpus`` given that does not fit is refused naming the numbers, or
    only warned of where the cluster may grow (``strict=False``: a cluster this process did not
    start). With autoscaling, ``min_replicas`` must fit; a ``max_replicas`` that cannot is warned of.

    >>> fit_replicas(2, None, None, {"CPU": 8.0}) is None
    True
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit_replicas(4, None, None, {"CPU": 2.0}), fit_replicas(3, None, {"num_gpus": 0}, {"CPU": 2.0})
    ...     fit_replicas(None, {"min_replicas": 1, "max_replicas": 8}, None, {"CPU": 2.0})
    ({'num_cpus': 0.5}, {'num_gpus': 0, 'num_cpus': 0.6666})
    >>> for w in caught: print(w.message)  # doctest: +NORMALIZE_WHITESPACE
    the Ray cluster has 2 CPUs: each of the 4 replicas asks for 0.5 CPU instead of 1, or 2 could never start
    (give ray_actor_options={'num_cpus': ...} to choose)
    the Ray cluster has 2 CPUs: each of the 3 replicas asks for 0.6666 CPU instead of 1, or 1 could never start
    (give ray_actor_options={'num_cpus': ...} to choose)
    max_replicas=8 x num_cpus=1 need 8 CPUs, but the Ray cluster has 2: at most 2 replicas can run
    >>> fit_replicas(4, None, {"num_cpus": 1}, {"CPU": 2.0})
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: 4 replicas x num_cpus=1 each need 4 CPUs, but the Ray cluster has 2: use 2 replicas or num_cpus=0.5
    """
    if autoscaling_config is None:
        least = most = 1 if num_replicas is None else num_replicas
    else:

        def setting(key: str, default: int) -> int:
            value = (
                autoscaling_config.get(key)
                if isinstance(autoscaling_config, dict)
                else getattr(autoscaling_config, key, None)
            )
            return default if value is None else value

        least = setting("initial_replicas", setting("min_replicas", 1))
        most = max(least, setting("max_replicas", 1))
    options = dict(ray_actor_options or {})
    total = float(cluster.get("CPU", 0.0))
    if options.get("num_cpus") is None and least > total > 0:
        share = int(total / least / _RESOURCE_STEP) * _RESOURCE_STEP
        warnings.warn(
            f"the Ray cluster has {total:g} CPUs: each of the {least} replicas asks for {share:.4g} CPU instead of 1, "
            f"or {least - int(total)} could never start (give ray_actor_options={{'num_cpus': ...}} to choose)",
            stacklevel=2,
        )
        options["num_cpus"] = round(share, 4)
    for resource, key in (("CPU", "num_cpus"), ("GPU", "num_gpus")):
        each = options.get(key, 1 if key == "num_cpus" else 0) or 0
        have = float(cluster.get(resource, 0.0))
        if not each:
            continue
        fits = int(have / each + 1e-9)
        if least * each > have:
            message = (
                f"{least} replicas x {key}={each:g} each need {least * each:g} {resource}s, but the Ray cluster has {have:g}: "
                + (
                    f"use {fits} replicas or {key}={int(have / least / _RESOURCE_STEP) * _RESOURCE_STEP:.4g}"
                    if fits
                    else f"start Ray with more {resource}s"
                )
            )
            if strict:
                raise ArgumentError(message)
            warnings.warn(message + " (unless the cluster grows)", stacklevel=2)
        elif most * each > have:
            warnings.warn(
                f"max_replicas={most} x {key}={each:g} need {most * each:g} {resource}s, but the Ray cluster has {have:g}: "
                f"at most {fits} replicas can run",
                stacklevel=2,
            )
    return options if options or ray_actor_options is not None else None
