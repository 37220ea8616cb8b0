"""``nlgscore serve --workers N``: the parent process, which binds the port, starts the model
process and N HTTP worker processes, restarts a worker that dies, and stops them all on SIGTERM.

The parent binds the listening sockets before anything loads (a port in use is one clear error):
one per worker on the same port with ``SO_REUSEPORT``, so that the kernel spreads the connections
evenly (:func:`~nlgscore.serve.http.server.bind_group`; one shared socket where the system lacks it).
Then it forks the model process (:mod:`nlgscore.serve.workers.model_process`) and the workers
(:mod:`nlgscore.serve.workers.worker_app`); a worker started again takes over its slot's socket and the
connections waiting in it. It forks before any
model is loaded, so no thread or accelerator state is copied. Shared between them: whether the
model process is alive (workers answer 503 once it is not) and each worker's requests in
flight (``--max-concurrent`` over all workers). ``ps`` and ``top`` show the model process as
``nlgscore-model`` and the workers as ``nlgscore-http0``, ``nlgscore-http1``, ...

A worker that dies is started again; the connections it held are closed by the kernel (their
clients see a closed connection, never a hang) and its calls end at their deadline. A model
process that dies once loaded is started again after a back-off (1 s, doubling to at most 30 s,
back to 1 s once a start has served a minute); meanwhile ``/health`` and every scoring request
answer 503 with ``Retry-After``, and the requests it held are answered 503 at once. A restarted
model process that cannot load its scorer any more ends the server with status 2, so that an
orchestrator sees it. SIGTERM (or Ctrl-C) drains the workers (each as the single-process server
does: the requests in flight get the whole ``--drain-timeout``), then stops the model process;
anything still running :data:`STOP_TAIL_S` after the drain is killed. A parent killed outright
(SIGKILL) takes its children with it: each asks the kernel for a SIGTERM when its parent dies
(Linux); the folder of its IPC socket is removed by the next server that starts.
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

from nlgscore.serve.http.app import CLOSE_WAIT_S
from nlgscore.serve.http.gate import Settings
from nlgscore.serve.http.header_timeout import DEFAULT_HEADER_TIMEOUT
from nlgscore.serve.http.server import CUT_GRACE_S, DEFAULT_DRAIN_TIMEOUT, bind_group, draining_server
from nlgscore.serve.workers import ipc
from nlgscore.serve.workers.model_process import LOAD_FAILED, run_model

__all__ = ["run_workers", "remove_stale_folders", "MODEL_NAME", "WORKER_NAME"]

TICK_S = 0.1  # how often the parent looks at its children
# The processes' names in ps/top (/proc/PID/comm): the model process, and each worker by its slot.
MODEL_NAME = "nlgscore-model"
WORKER_NAME = "nlgscore-http"
STOP_SLACK_S = 1.0  # the model process's stop, after the workers'
# What a stop may take after --drain-timeout: uvicorn's cut of the open connections, the
# scheduler's threads, the model process's stop. The requests in flight get the whole drain.
STOP_TAIL_S = CUT_GRACE_S + CLOSE_WAIT_S + STOP_SLACK_S
RESTART_BACKOFF_S = (1.0, 30.0)  # the first wait before the model process is started again, and the longest
STEADY_S = 60.0  # a model process that served this long restarts the back-off at its first wait
FOLDER_PREFIX = "nlgscore-serve-"  # the IPC folder: nlgscore-serve-<parent PID>-<random>


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

    from nlgscore.serve.http.header_timeout import with_header_timeout
    from nlgscore.serve.workers.worker_app import create_worker_app

    app = create_worker_app(settings, address, alive, slots, slot, api_key)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=CUT_GRACE_S,  # type: ignore[arg-type]
        http=with_header_timeout(header_timeout),
    )
    draining_server(uvicorn.Server, config, app.state.nlgscore, drain_timeout).run(sockets=[sock])
    os._exit(0)


def _model(load: Callable[[], Any], settings: Settings, address: str, slots: Any, ready: Any, parent: int) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # until the model process installs its own
    _die_with_parent(parent)
    _name_process(MODEL_NAME)
    run_model(load, settings, address, lambda: sum(slots), ready)


def remove_stale_folders(root: Optional[str] = None) -> List[str]:
    """Remove the IPC folders of servers whose parent is gone (a SIGKILLed server cannot remove
    its own); the folders removed. A folder of a running server, or of another user, is kept.

    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(root, f"{FOLDER_PREFIX}{2**22 + 7}-x")); os.mkdir(os.path.join(root, f"{FOLDER_PREFIX}{os.getpid()}-y"))
    >>> [os.path.basename(path) for path in remove_stale_folders(root)] == [f"{FOLDER_PREFIX}{2**22 + 7}-x"]
    True
    """
    root = root or tempfile.gettempdir()
    removed: List[str] = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        pid_text = name[len(FOLDER_PREFIX) :].split("-", 1)[0]
        if not name.startswith(FOLDER_PREFIX) or not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # its server is running
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue  # another user's process, or not a process id
        path = os.path.join(root, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


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
    remove_stale_folders()
    folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
    address = ipc.address(folder)
    context = multiprocessing.get_context("fork")
    alive = context.Value("b", 1, lock=False)
    slots = context.Array("l", workers, lock=False)
    ready = context.Event()
    stop: List[int] = []
    failed = False  # a restarted model process that could not load its scorer
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

    def start_model(event: Any) -> Any:
        process = context.Process(
            target=_model, name="nlgscore-serve-model", args=(load, settings, address, slots, event, os.getpid())
        )
        process.start()
        return process

    try:
        sys.stderr.flush()
        model = start_model(ready)
        started = time.monotonic()
        backoff, restart_at, restarted = RESTART_BACKOFF_S[0], None, False
        pool = [start_worker(slot) for slot in range(workers)]
        while not stop:
            time.sleep(TICK_S)
            if restart_at is None and not model.is_alive():
                alive.value = 0
                if model.exitcode == LOAD_FAILED and not ready.is_set():
                    failed = restarted
                    break
                if time.monotonic() - started >= STEADY_S:
                    backoff = RESTART_BACKOFF_S[0]
                restart_at = time.monotonic() + backoff
                print(
                    f"nlgscore serve: the model process ended (status {model.exitcode}); requests are answered 503 "
                    f"until it is started again, in {backoff:g} s",
                    file=sys.stderr,
                    flush=True,
                )
                backoff = min(2 * backoff, RESTART_BACKOFF_S[1])
            elif restart_at is not None and time.monotonic() >= restart_at:
                ready = context.Event()
                model, started, restart_at, restarted = start_model(ready), time.monotonic(), None, True
            elif restart_at is None and not alive.value and ready.is_set():
                alive.value = 1  # the model process started again has loaded its scorer
                print("nlgscore serve: the model process is serving again", file=sys.stderr, flush=True)
            for slot, process in enumerate(pool):
                if not process.is_alive() and not stop:
                    print(
                        f"nlgscore serve: worker {slot} ended (status {process.exitcode}); starting it again",
                        file=sys.stderr,
                        flush=True,
                    )
                    pool[slot] = start_worker(slot)
        deadline = time.monotonic() + drain_timeout + STOP_TAIL_S
        for process in pool:  # each drains as the one-process server does
            if process.is_alive():
                process.terminate()
        for process in pool:
            process.join(max(0.0, deadline - STOP_SLACK_S - time.monotonic()))
        if model.is_alive():
            model.terminate()
        model.join(max(0.1, deadline - time.monotonic()))
        for process in [*pool, model]:
            if process.is_alive():
                process.kill()
                process.join()
        if failed:
            print(
                "nlgscore serve: the model process started again could not load its scorer; stopping (status 2)",
                file=sys.stderr,
                flush=True,
            )
        return LOAD_FAILED if model.exitcode == LOAD_FAILED and not ready.is_set() else 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sock in socks:
            sock.close()
        shutil.rmtree(folder, ignore_errors=True)
