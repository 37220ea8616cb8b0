"""``nlgscore serve SPEC``: one scorer behind an HTTP endpoint, many callers batched together.

    nlgscore serve bertscore:minilm --port 8000
    curl -s localhost:8000/v1/score -d '{"predictions": ["It is cold."], "references": ["It is cold today."]}'

Endpoints: ``GET /health``, ``POST /v1/score``, ``POST /get_reward`` (OpenRLHF's reward-model
protocol), ``POST /v1/matrix``, ``GET /metrics`` (Prometheus); see :mod:`nlgscore.serve.http.app`.
Also the RL frameworks' reward protocols: ``POST /v1/reward`` (slime), ``POST /seed_session`` and
``/verify`` (NeMo Gym), ``POST /roll/submit_task`` and ``GET /roll/task_result`` (ROLL).
The model is loaded once, after the server starts listening (``/health`` answers 503 until it is
ready). Binds 127.0.0.1 unless ``--host`` says otherwise, which needs ``--api-key-file``. torch
gets the usable CPUs minus one (``--threads``). SIGTERM finishes the requests in flight within
``--drain-timeout`` seconds (answering 503 to what it cuts) and exits 0. ``--workers N`` serves
the port with N HTTP worker processes feeding one model process (:mod:`nlgscore.serve.workers.supervisor`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Dict, Optional

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import (
    add_metric_option,
    add_runtime_options,
    check_device,
    fail,
    load_scorer,
    metric_option_settings,
    positive_int,
    runtime_settings,
)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def register(subparsers) -> None:
    from nlgscore.scheduler.microbatch import DEFAULT_MAX_BATCH, DEFAULT_MAX_QUEUE, DEFAULT_MAX_WAIT_MS
    from nlgscore.serve.http.gate import (
        DEFAULT_BODY_TIMEOUT,
        DEFAULT_MAX_BODY_BYTES,
        DEFAULT_MAX_CONCURRENT,
        DEFAULT_MAX_ITEMS,
        DEFAULT_TASK_TTL,
        DEFAULT_TIMEOUT,
    )
    from nlgscore.serve.http.header_timeout import DEFAULT_HEADER_TIMEOUT
    from nlgscore.serve.http.server import DEFAULT_DRAIN_TIMEOUT, DEFAULT_HOST, DEFAULT_PORT

    parser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description="Serve the metric named by SPEC over HTTP: concurrent requests are merged into batches "
        "(--max-batch predictions, waiting at most --max-wait-ms), the model is loaded once.",
    )
    parser.add_argument(
        "spec", metavar="SPEC", help="metric spec, e.g. bertscore:minilm:L4 or prism:ref:tests/golden/tiny-prism"
    )
    net = parser.add_argument_group("network")
    net.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}; any other needs --api-key-file)"
    )
    net.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0: a free port, printed on stderr)",
    )
    net.add_argument(
        "--api-key-file",
        default=None,
        metavar="FILE",
        help="file holding the token clients must send as 'Authorization: Bearer <token>'",
    )
    net.add_argument(
        "--timeout",
        type=_non_negative,
        default=DEFAULT_TIMEOUT,
        help=f"seconds a request may wait for its scores (504 after; default {DEFAULT_TIMEOUT:g})",
    )
    net.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body (413 above; default {DEFAULT_MAX_BODY_BYTES})",
    )
    net.add_argument(
        "--max-items",
        type=positive_int,
        default=DEFAULT_MAX_ITEMS,
        help=f"most predictions, and most references, per request (413 above; default {DEFAULT_MAX_ITEMS})",
    )
    net.add_argument(
        "--max-concurrent",
        type=positive_int,
        default=None,
        help=f"most requests in the server at once (429 with Retry-After above; default {DEFAULT_MAX_CONCURRENT})",
    )
    net.add_argument(
        "--body-timeout",
        type=_positive_seconds,
        default=None,
        help=f"seconds a client may take to send its request body (408 after; default {DEFAULT_BODY_TIMEOUT:g})",
    )
    net.add_argument(
        "--drain-timeout",
        type=_non_negative,
        default=DEFAULT_DRAIN_TIMEOUT,
        help=f"seconds SIGTERM waits for requests in flight before cutting them and exiting 0 (default {DEFAULT_DRAIN_TIMEOUT:g})",
    )
    net.add_argument(
        "--header-timeout",
        type=_positive_seconds,
        default=None,
        help=f"seconds a client may take to send its request line and headers "
        f"(the connection is closed after; default {DEFAULT_HEADER_TIMEOUT:g})",
    )
    net.add_argument(
        "--task-ttl",
        type=_positive_seconds,
        default=DEFAULT_TASK_TTL,
        help=f"seconds a finished ROLL task waits to be polled, holding a --max-queue slot (default {DEFAULT_TASK_TTL:g})",
    )
    net.add_argument(
        "--workers",
        type=_workers,
        default=None,
        help="HTTP worker processes on the port, feeding one model process (default: 1 on CPU, where one "
        "process serves everything and the model needs the cores; on a CUDA machine the cores less two, "
        "at most 8). More workers parse, check, tokenize and answer requests in parallel where the model "
        "outpaces one core's HTTP (a GPU, a light metric); see docs/guides/serving-workers.md",
    )
    net.add_argument(
        "--threads",
        type=_threads,
        default=None,
        help="torch CPU threads (default: usable CPUs - 1, at least 1: one core is left to the event loop and the HTTP stack)",
    )
    batching = parser.add_argument_group("micro-batching")
    batching.add_argument(
        "--max-batch",
        type=positive_int,
        default=DEFAULT_MAX_BATCH,
        help=f"most predictions merged into one forward batch (default {DEFAULT_MAX_BATCH})",
    )
    batching.add_argument(
        "--max-wait-ms",
        type=_non_negative,
        default=DEFAULT_MAX_WAIT_MS,
        help=f"how long a request waits for others to join its batch (default {DEFAULT_MAX_WAIT_MS:g})",
    )
    batching.add_argument(
        "--max-queue",
        type=positive_int,
        default=DEFAULT_MAX_QUEUE,
        help=f"most predictions waiting (429 with Retry-After above; default {DEFAULT_MAX_QUEUE})",
    )
    batching.add_argument(
        "--reference-cache",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep reference embeddings across requests, for metrics that can (BERTScore): the rollouts of a "
        "GRPO prompt share one reference encoding (default: on)",
    )
    batching.add_argument(
        "--candidate-cache",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also keep prediction embeddings across requests (BERTScore; the same bounded cache): a prediction "
        "scored again is not re-encoded (an evaluation set after every epoch, repeated short answers, MBR "
        "candidates). Default off: RL rollouts rarely repeat, and would push references out of the cache",
    )
    scale = parser.add_argument_group("Ray Serve (the 'ray' extra)")
    scale.add_argument(
        "--ray",
        action="store_true",
        help="serve with Ray Serve: replicas behind Ray's HTTP proxy, batched with @serve.batch "
        "(a local Ray, or the cluster in RAY_ADDRESS)",
    )
    scale.add_argument("--replicas", type=positive_int, default=None, help="number of replicas (with --ray; default 1)")
    scale.add_argument(
        "--autoscaling-config",
        type=_json_object,
        default=None,
        metavar="JSON",
        help='Ray Serve autoscaling_config as JSON, e.g. \'{"min_replicas": 1, "max_replicas": 4}\' (with --ray; instead of --replicas)',
    )
    add_metric_option(parser)
    add_runtime_options(parser, dtype=True)
    parser.set_defaults(func=run)


def _positive_seconds(text: str) -> float:
    value = _non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a number of seconds > 0, got 0")
    return value


def _at_most(most: int, what: str) -> Any:
    """An argparse type: a positive integer up to ``most`` (``what`` names the unit in the error).

    >>> _at_most(8, "threads")("4")
    4
    """

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"expected at most {most} {what}, got {text}")
        return value

    return parse


# torch.set_num_threads takes a C int; no machine has more cores than this.
_threads = _at_most(65536, "threads")
_workers = _at_most(256, "worker processes")


MAX_DEFAULT_WORKERS = 8  # where HTTP stops being what bounds a GPU's requests/s (BENCHMARKS "Serving")


def default_workers(device: Optional[str]) -> int:
    """``--workers`` when not given: 1 on CPU (the model's threads need the cores: more processes
    only add the IPC hop's CPU there, BENCHMARKS "Serving"); on a CUDA machine the cores less two
    (the model process's feeder and model threads), at most 8. The CUDA check reads NVML, so the
    server still forks its processes before any of them touches CUDA.

    >>> default_workers("cpu")
    1
    """
    if device is not None and not str(device).startswith("cuda"):
        return 1
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        import torch
    except ImportError:
        return 1
    if not torch.cuda.is_available():
        return 1
    from nlgscore.backend.threads import available_cpus

    return max(1, min(MAX_DEFAULT_WORKERS, available_cpus() - 2))


def _json_object(text: str) -> Dict[str, Any]:
    import json

    try:
        value = json.loads(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r} ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def read_api_key(path: str) -> str:
    """The token in ``path`` (surrounding whitespace dropped); an empty, unreadable or non-UTF-8 file is an error."""
    try:
        with open(path, encoding="utf-8") as handle:
            key = handle.read().strip()
    except UnicodeDecodeError:
        fail(f"--api-key-file {path}: the file is not UTF-8 text")
    except OSError as err:
        fail(f"--api-key-file {path}: {err.strerror or err}")
    if not key or any(c.isspace() for c in key):
        fail(
            f"--api-key-file {path}: the file must hold one token (no spaces), got {'nothing' if not key else 'several words'}"
        )
    return key


def scorer_options(args: argparse.Namespace) -> Dict[str, Any]:
    """What ``nlgscore serve``'s flags and ``--option``s build the scorer with
    (``nlgscore.registry.build(args.spec, **options)``); an option the metric does not take (a
    flag such as ``--long-inputs`` included) ends the command before the model loads."""
    from nlgscore import registry
    from nlgscore.core.options import split_options

    options: Dict[str, Any] = metric_option_settings(args, args.spec, runtime_settings(args))
    cls = registry.metric(registry.parse_spec(args.spec)[0]).scorer_class()
    try:
        split_options(cls, options)
    except (ValueError, TypeError) as err:
        fail(str(err))
    options["progress"] = False  # one bar per merged batch would be noise
    if getattr(cls, "caches_embeddings", False):
        options.setdefault("cache_references", args.reference_cache)  # a GRPO prompt's G rollouts share one reference
        options.setdefault("cache_candidates", args.candidate_cache)
    return options


def run(args: argparse.Namespace) -> int:
    from nlgscore import registry
    from nlgscore.serve.http.app import create_app
    from nlgscore.serve.http.server import check_exposure, run_server

    name, _ = registry.parse_spec(args.spec)
    check_device(args.device)
    if not 0 <= args.port <= 65535:
        fail(f"--port must be 0-65535, got {args.port}")
    api_key = read_api_key(args.api_key_file) if args.api_key_file else None
    check_exposure(args.host, api_key)
    options = scorer_options(args)

    if args.ray or args.replicas is not None or args.autoscaling_config is not None:
        return _run_ray(args, options, api_key)
    from nlgscore.serve.http.header_timeout import DEFAULT_HEADER_TIMEOUT

    args.header_timeout = DEFAULT_HEADER_TIMEOUT if args.header_timeout is None else args.header_timeout
    settings = server_settings(args)  # every limit checked now, before any model loads or process starts

    from nlgscore import envs
    from nlgscore.backend.threads import available_cpus

    if args.workers is None:
        args.workers = default_workers(args.device)
    # --threads, else NLGSCORE_THREADS, else the usable CPUs less one per HTTP process: handed to the
    # process that builds the model (this one, or the model process under --workers) as an argument
    threads = args.threads or envs.THREADS.get() or max(1, available_cpus() - args.workers)
    build = model_builder(args.spec, options, threads)

    def announce(url: str) -> None:
        print(
            f"nlgscore serve: {args.spec} on {url} (GET /health answers 200 once the model is loaded)",
            file=sys.stderr,
            flush=True,
        )

    verbose = getattr(args, "log_level", "WARNING").upper() in ("INFO", "DEBUG")
    if args.workers > 1:
        return _run_workers(args, settings, build, api_key, announce, "info" if verbose else "warning")

    def app(on_loaded):
        return create_app(
            lambda: load_scorer(build, {"SPEC": args.spec}),
            settings=settings,
            api_key=api_key,
            on_loaded=on_loaded,
            freeze_heap=True,
        )

    return run_server(
        app,
        args.host,
        args.port,
        log_level="info" if verbose else "warning",
        announce=announce,
        drain_timeout=args.drain_timeout,
        header_timeout=args.header_timeout,
    )


def server_settings(args: argparse.Namespace) -> Any:
    """The :class:`~nlgscore.serve.http.gate.Settings` of the command's flags: the one object the
    app, the workers and Ray take; a limit out of range ends the command naming its flag."""
    from nlgscore.errors import ArgumentError
    from nlgscore.serve.http.gate import Settings

    given = dict(
        max_batch=args.max_batch,
        max_wait_ms=args.max_wait_ms,
        max_queue=args.max_queue,
        timeout=args.timeout,
        max_body_bytes=args.max_body_bytes,
        max_items=args.max_items,
        max_concurrent=args.max_concurrent,
        body_timeout=args.body_timeout,
        task_ttl=args.task_ttl,
    )
    try:
        return Settings(**{name: value for name, value in given.items() if value is not None})
    except ArgumentError as err:
        fail(str(err))


def model_builder(spec: str, options: Dict[str, Any], threads: int) -> Callable[[], Any]:
    """The model's builder, run in the process that will score: torch's CPU threads set to
    ``threads`` there first (:func:`nlgscore.backend.threads.limit_threads`), then the scorer built.

    >>> callable(model_builder("chrf", {}, 1))
    True
    """

    def build() -> Any:
        from nlgscore import registry
        from nlgscore.backend.threads import limit_threads

        limit_threads(threads)
        return registry.build(spec, **options)

    return build


def _run_workers(
    args: argparse.Namespace, settings: Any, build: Callable[[], Any], api_key: Any, announce: Any, log_level: str
) -> int:
    """``--workers N``: N HTTP worker processes and one model process (nlgscore.serve.workers.supervisor)."""
    from nlgscore.serve.workers.supervisor import run_workers

    status = run_workers(
        lambda: load_scorer(build, {"SPEC": args.spec}),
        settings,
        args.workers,
        args.host,
        args.port,
        api_key=api_key,
        log_level=log_level,
        announce=announce,
        drain_timeout=args.drain_timeout,
        header_timeout=args.header_timeout,
    )
    if status:
        fail(f"the model of {args.spec} did not load (its error is above)")
    return 0


def _run_ray(args: argparse.Namespace, options: Dict[str, Any], api_key: Any) -> int:
    """``--ray``: the same app on Ray Serve (nlgscore.serve.ray), until SIGTERM or Ctrl-C."""
    if not args.ray:
        fail("--replicas and --autoscaling-config need --ray")
    if args.replicas is not None and args.autoscaling_config is not None:
        fail("pass --replicas or --autoscaling-config, not both")
    # Ray's HTTP proxy reads the bodies and holds the connections, and each replica sets its own
    # threads (ray_actor_options): these flags would not do what they say there, so they are refused.
    if args.workers is not None:
        fail(
            "--workers is not applied under --ray: Ray Serve runs its own HTTP proxy in front of the replicas (use --replicas)"
        )
    for flag, value in (
        ("--body-timeout", args.body_timeout),
        ("--max-concurrent", args.max_concurrent),
        ("--threads", args.threads),
        ("--header-timeout", args.header_timeout),
    ):
        if value is not None:
            fail(
                f"{flag} is not applied under --ray (Ray Serve's proxy holds the connections and sizes the replicas): "
                "leave it out, or serve without --ray"
            )
    from nlgscore.serve.ray import run as run_ray

    app_options = dict(
        max_queue=args.max_queue,
        timeout=args.timeout,
        api_key=api_key,
        max_body_bytes=args.max_body_bytes,
        max_items=args.max_items,
        task_ttl=args.task_ttl,
    )

    def ready() -> None:
        print(
            f"nlgscore serve: {args.spec} on Ray Serve at http://{args.host}:{args.port} (SIGTERM or Ctrl-C stops it)",
            file=sys.stderr,
            flush=True,
        )

    return run_ray(
        args.spec,
        args.host,
        args.port,
        num_replicas=args.replicas,
        autoscaling_config=args.autoscaling_config,
        max_batch=args.max_batch,
        max_wait_ms=args.max_wait_ms,
        app_options=app_options,
        on_ready=ready,
        drain_timeout=args.drain_timeout,
        **options,
    )
