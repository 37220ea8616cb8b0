"""``nlgscore serve --workers N``: the parent process, which binds the port, starts the model
process and N HTTP worker processes, restarts a worker that dies, and stops them all on SIGTERM.

The parent binds the listening sockets before anything loads (a port in use is one clear error):
one per worker on the same port with ``SO_REUSEPORT``, so that the kernel spreads the connections
evenly (:func:`~nlgscore.serve.server.bind_group`; one shared socket where the system lacks it).
Then it forks the model process (:mod:`nlgscore.serve.model_process`) and the workers
(:mod:`nlgscore.serve.worker_app`); a worker started again takes over its slot's socket and the
connections waiting in it. It forks before any
model is loaded, so no thread or accelerator state is copied. Shared between them: whether the
model process is alive (workers answer 503 once it is not) and each worker's requests in
flight (``--max-concurrent`` over all workers). ``ps`` and ``top`` show the model process as
``nlgscore-model`` and the workers as ``nlgscore-http0``, ``nlgscore-http1``, ...

A worker that dies is started again; the connections it held are closed by the kernel (their
clients see a closed connection, never a hang) and its calls end at their deadline. The model
process dying makes ``/health`` 503 and every scoring request 503. SIGTERM (or Ctrl-C) drains the
workers (each as the single-process server does), then stops the model process, all within
``--drain-timeout``; anything still running then is killed. A parent killed outright (SIGKILL)
takes its children with it: each asks the kernel for a SIGTERM when its parent dies (Linux).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from typing import Any, Callable, List, Optional

from nlgscore.serve import ipc
from nlgscore.serve.header_timeout import DEFAULT_HEADER_TIMEOUT
from nlgscore.serve.model_process import LOAD_FAILED, run_model
from nlgscore.serve.server import DEFAULT_DRAIN_TIMEOUT, bind_group, draining_server
from nlgscore.serve.service import Settings

__all__ = ["run_workers", "MODEL_NAME", "WORKER_NAME"]

TICK_S = 0.1  # how often the parent looks at its children
# The processes' names in ps/top (/proc/PID/comm): the model process, and each worker by its slot.
MODEL_NAME = "nlgscore-model"
WORKER_NAME = "nlgscore-http"
STOP_SLACK_S = 1.0  # of --drain-timeout, kept for the model process's stop after the workers'


def _prctl(option: int, value: Any) -> bool:
    """Linux ``prctl(option, value)``; False where the call is not there (another system)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return True


def _name_process(name: str) -> None:
    """Give this process a name that ``ps``, ``top`` and ``/proc/PID/comm`` show (Linux
    ``PR_SET_NAME``, at most 15 bytes), so that an operator tells the model process from the
    workers; elsewhere nothing."""
    _prctl(15, name.encode()[:15])  # 15: PR_SET_NAME


def _die_with_parent(parent: int) -> None:
    """In a child: be sent SIGTERM when the parent dies (Linux ``PR_SET_PDEATHSIG``), so that a
    parent killed with SIGKILL leaves no worker or model process behind."""
    # 1: PR_SET_PDEATHSIG; elsewhere the children end with the parent's orderly stop only
    if not _prctl(1, signal.SIGTERM):
        return
    if os.getppid() != parent:  # the parent died before the request above
        os.kill(os.getpid(), signal.SIGTERM)


def _worker(
    sock: Any,
    settings: Settings,
    address: str,
    alive: Any,
    slots: Any,
    slot: int,
    api_key: Optional[str],
    log_level: str,
    drain_timeout: float,
    header_timeout: float,
    parent: int,
) -> None:
    """One worker process: uvicorn on the inherited socket."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handlers, until uvicorn installs its own
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _die_with_parent(parent)
    _name_process(f"{WORKER_NAME}{slot}")
    import uvicorn

    from nlgscore.serve.header_timeout import with_header_timeout
    from nlgscore.serve.server import CUT_GRACE_S
    from nlgscore.serve.worker_app import WorkerService, create_worker_app

    service = WorkerService(settings, address, alive, slots, slot)
    config = uvicorn.Config(
        create_worker_app(service, api_key),
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=CUT_GRACE_S,  # type: ignore[arg-type]
        http=with_header_timeout(header_timeout),
    )
    draining_server(uvicorn.Server, config, service, max(0.0, drain_timeout - STOP_SLACK_S)).run(sockets=[sock])
    os._exit(0)


def _model(load: Callable[[], Any], settings: Settings, address: str, slots: Any, ready: Any, parent: int) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # until the model process installs its own
    _die_with_parent(parent)
    _name_process(MODEL_NAME)
    run_model(load, settings, address, lambda: sum(slots), ready)


def run_workers(
    load: Callable[[], Any],
    settings: Settings,
    workers: int,
    host: str,
    port: int,
    *,
    api_key: Optional[str] = None,
    log_level: str = "warning",
    announce: Optional[Callable[[str], None]] = None,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
) -> int:
    """Serve with ``workers`` HTTP processes and one model process (``load()`` builds the scorer
    there) until SIGTERM/SIGINT; 0, or 2 if the scorer could not load."""
    socks = bind_group(host, port, workers)
    if announce is not None:
        bound = socks[0].getsockname()
        announce(f"http://{f'[{bound[0]}]' if ':' in bound[0] else bound[0]}:{bound[1]}")
    folder = tempfile.mkdtemp(prefix="nlgscore-serve-")
    address = ipc.address(folder)
    context = multiprocessing.get_context("fork")
    alive = context.Value("b", 1, lock=False)
    slots = context.Array("l", workers, lock=False)
    ready = context.Event()
    stop: List[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, frame: stop.append(signum)) for sig in (signal.SIGTERM, signal.SIGINT)
    }

    def start_worker(slot: int) -> Any:
        slots[slot] = 0
        process = context.Process(
            target=_worker,
            name=f"nlgscore-serve-worker-{slot}",
            daemon=False,
            args=(
                socks[slot % len(socks)],
                settings,
                address,
                alive,
                slots,
                slot,
                api_key,
                log_level,
                drain_timeout,
                header_timeout,
                os.getpid(),
            ),
        )
        process.start()
        return process

    try:
        sys.stderr.flush()
        model = context.Process(
            target=_model, name="nlgscore-serve-model", args=(load, settings, address, slots, ready, os.getpid())
        )
        model.start()
        pool = [start_worker(slot) for slot in range(workers)]
        while not stop:
            time.sleep(TICK_S)
            if alive.value and not model.is_alive():
                alive.value = 0
                if model.exitcode == LOAD_FAILED and not ready.is_set():
                    break
                print(
                    f"nlgscore serve: the model process ended (status {model.exitcode}); every request is answered 503",
                    file=sys.stderr,
                    flush=True,
                )
            for slot, process in enumerate(pool):
                if not process.is_alive() and not stop:
                    print(
                        f"nlgscore serve: worker {slot} ended (status {process.exitcode}); starting it again",
                        file=sys.stderr,
                        flush=True,
                    )
                    pool[slot] = start_worker(slot)
        deadline = time.monotonic() + drain_timeout
        for process in pool:  # each drains as the one-process server does
            if process.is_alive():
                process.terminate()
        for process in pool:
            process.join(max(0.0, deadline - STOP_SLACK_S / 2 - time.monotonic()))
        if model.is_alive():
            model.terminate()
        model.join(max(0.1, deadline - time.monotonic()))
        for process in [*pool, model]:
            if process.is_alive():
                process.kill()
                process.join()
        return LOAD_FAILED if model.exitcode == LOAD_FAILED and not ready.is_set() else 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sock in socks:
            sock.close()
        shutil.rmtree(folder, ignore_errors=True)
