"""Ray Serve on a local Ray instance, nothing mocked: ``nlgscore serve SPEC --ray --replicas 3``
(a real subprocess running a Ray of 2 CPUs, as on a 2-core machine) serves the ``nlgscore serve``
app from three MiniLM replicas behind Ray's HTTP proxy: they are given 0.6666 CPU each, with a
warning, where 1 CPU each left one unplaced for ever. Concurrent clients get exactly ``compute``'s scores; requests
are merged by ``@serve.batch``; a replica process killed (SIGKILL) while requests are in flight
loses nothing: its failed requests are sent again by the client and every request's scores come
back once, in order; SIGTERM then shuts Serve and Ray down and exits 0.

A hard timeout bounds the test, and the server's process group is killed whatever happens.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.serve", reason="Ray Serve is the 'ray' extra: pip install 'nlgscore[ray]'")
httpx = pytest.importorskip("httpx", reason="the client is the 'serve' extra")

from nlgscore.errors import ArgumentError  # noqa: E402
from nlgscore.registry import load  # noqa: E402
from nlgscore.serve.ray import deployment  # noqa: E402

SPEC = "bertscore:minilm:L2"
HARD_TIMEOUT = 240  # seconds for the whole run; ~50 s on a quiet machine
N = 40  # requests, two predictions each
WORDS = ["cat", "dog", "cow", "fox"] * (N // 4)
PREDS = [[f"the {w} number {k} sat on the mat", f"a {w} slept {k % 4} hours"] for k, w in enumerate(WORDS)]
REFS = [[f"a {w} was sitting on a mat", f"the {w} slept all day"] for w in ["cat", "dog", "bird", "fox"] * (N // 4)]
REPLICA_TITLE = b"ray::ServeReplica:nlgscore:"
REPLICAS = 3
# `nlgscore serve` on a Ray of `cpus` CPUs started first (2: what `ray.init()` gives on a 2-core machine,
# whatever this one has), or on the Ray it starts itself (cpus=0, as a user runs it); `hog` CPUs are then
# held by a placement group: a cluster busy with other work, where no replica can start. The drain
# timeout is nlgscore serve's --drain-timeout, made short here.
WRAPPER = """import sys, ray
cpus, hog = (float(a) for a in sys.argv[1:3])
del sys.argv[1:3]
if cpus:
    ray.init(num_cpus=int(cpus), include_dashboard=False, log_to_driver=False)
if hog:
    ray.get(ray.util.placement_group([{"CPU": hog}]).ready())
from nlgscore.cli import main
sys.exit(main(sys.argv[1:]))
"""
# RAY_ADDRESS=local: a Ray of its own, never a cluster another process started with `ray start`
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", RAY_ADDRESS="local")


def _descendants(root: int) -> dict:
    """``{pid: cmdline}`` of every process below ``root`` (Ray's workers are the raylet's children)."""
    children: dict = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append((int(entry.name), (entry / "cmdline").read_bytes()))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = {}, [root]
    while todo:
        for pid, cmdline in children.get(todo.pop(), []):
            found[pid] = cmdline
            todo.append(pid)
    return found


def _running(pid):
    try:
        return b"State:\tZ" not in Path(f"/proc/{pid}/status").read_bytes()  # a zombie has exited
    except OSError:
        return False


class Output:
    """The server's stderr, read by a thread (Ray logs a lot: an unread pipe would block it)."""

    def __init__(self, stream, ready_text):
        self.lines, self.ready = [], threading.Event()
        self.ready_text = ready_text
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)
            if self.ready_text in line:
                self.ready.set()
        self.ready.set()  # EOF: the server is gone

    def tail(self):
        return "".join(self.lines[-30:])


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(args, cpus=2, hog=0, drain=30):
    """``nlgscore serve ARGS`` on a Ray of ``cpus`` CPUs (WRAPPER), in a process group of its own."""
    command = [sys.executable, "-c", WRAPPER, str(cpus), str(hog), "serve", *args, "--drain-timeout", str(drain)]
    return subprocess.Popen(
        command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def _start_server(servers, deadline):
    """``nlgscore serve SPEC --ray --replicas 3`` on a free port, once it says it serves; a port
    taken by another process before Ray's proxy binds it (a shared machine) means another try."""
    for _ in range(3):
        port = _free_port()
        server = _serve(
            [
                SPEC,
                "--ray",
                "--replicas",
                str(REPLICAS),
                "--port",
                str(port),
                "--max-batch",
                "16",
                "--max-wait-ms",
                "30",
            ]
        )
        output = Output(server.stderr, "on Ray Serve at")
        servers.append((server, output))
        output.ready.wait(max(1.0, deadline - time.monotonic()))
        if server.poll() is None and any("on Ray Serve at" in line for line in output.lines):
            return server, output, port
        if "Failed to bind" not in output.tail():
            break
        server.wait()
    raise AssertionError(f"the server did not start: {output.tail()}")


def _kill_all(servers):
    for server, _ in servers:
        try:
            os.killpg(server.pid, signal.SIGKILL)  # the server's own group: any Ray process of its left too
        except ProcessLookupError:
            pass


def test_cli_ray_replicas_score_like_compute_and_a_killed_replica_loses_nothing():
    deadline = time.monotonic() + HARD_TIMEOUT
    servers = []
    watchdog = threading.Timer(
        HARD_TIMEOUT, _kill_all, (servers,)
    )  # the hard timeout: everything below then fails fast
    watchdog.start()
    try:
        server, output, port = _start_server(servers, deadline)
        base = f"http://127.0.0.1:{port}"
        replicas = {pid: cmd for pid, cmd in _descendants(server.pid).items() if cmd.startswith(REPLICA_TITLE)}
        assert len(replicas) == REPLICAS, replicas  # every replica placed before it says it serves
        warned = output.tail().index(
            f"each of the {REPLICAS} replicas asks for 0.6666 CPU instead of 1, or 1 could never start"
        )
        assert warned < output.tail().index("on Ray Serve at")  # said before it serves
        expected = load(SPEC).compute([p for ps in PREDS for p in ps], references=[r for rs in REFS for r in rs])
        remote = load(base)  # the RemoteScorer: what any client of the endpoint uses, with its retries
        assert remote.signature == expected.signature
        with httpx.Client() as client:
            health = client.get(f"{base}/health").json()
            assert health["status"] == "ok" and health["metric"] == "bertscore"
            assert (
                client.post(f"{base}/v1/score", json={"predictions": ["a", "b"], "references": ["c"]}).status_code
                == 400
            )

            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                futures = [pool.submit(remote.compute, PREDS[k], references=REFS[k]) for k in range(N)]
                while sum(f.done() for f in futures) < 4:  # the load is under way: kill a replica in the middle of it
                    time.sleep(0.01)
                victim = min(replicas)
                os.kill(victim, signal.SIGKILL)
                in_flight = N - sum(f.done() for f in futures)
                answers = [f.result(timeout=max(1.0, deadline - time.monotonic())) for f in futures]
            assert victim not in _descendants(server.pid) and in_flight > 0

            got = []
            for result in answers:
                assert len(result.scores) == 2 and str(result.signature) == str(expected.signature)
                got.extend(result.scores)
            assert got == pytest.approx(expected.scores, abs=1e-6)  # every request once, in order, equal to compute

            merged = frozen = 0.0
            for _ in range(8):  # /metrics of whichever replica answers: requests were merged by @serve.batch
                text = client.get(f"{base}/metrics").text
                kept = re.search(r"^nlgscore_gc_frozen_objects ([0-9.e+]+)$", text, re.M)
                frozen = max(frozen, float(kept.group(1)) if kept else 0.0)
                calls = re.search(r"^nlgscore_batch_calls_sum ([0-9.e+]+)$", text, re.M)
                count = re.search(r"^nlgscore_batch_calls_count ([0-9.e+]+)$", text, re.M)
                if calls and count and float(count.group(1)):
                    merged = max(merged, float(calls.group(1)) / float(count.group(1)))
            assert merged > 1, "no replica merged two requests into one batch"
            assert frozen > 10_000, "no replica kept its loaded objects out of garbage collections"
        print(
            f"requests not done at the kill: {in_flight}; "
            f"replicas now: {[p for p, c in _descendants(server.pid).items() if c.startswith(REPLICA_TITLE)]} (killed {victim})"
        )
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=max(1.0, min(60.0, deadline - time.monotonic()))) == 0, output.tail()
    finally:
        watchdog.cancel()
        _kill_all(servers)
        for server, output in servers:
            server.wait()
            output.thread.join(10)


def test_the_client_retries_a_proxy_error_but_not_the_apps_own():
    from nlgscore.remote.client import retryable

    assert retryable(httpx.Response(500, text="Internal Server Error"))  # Ray Serve's proxy: the replica died
    assert retryable(httpx.Response(502, text="Bad Gateway")) and retryable(
        httpx.Response(503, json={"error": "queue full"})
    )
    assert retryable(
        httpx.Response(429, json={"error": "overloaded"})
    )  # backs off under overload (tests/serve/test_serve_limits.py)
    assert not retryable(
        httpx.Response(500, json={"error": "internal error: ValueError: x"})
    )  # the app failed: raised at once
    assert not retryable(httpx.Response(400, json={"error": "references: ..."}))


def test_deployment_and_flags_are_checked_before_anything_starts(capsys):
    from nlgscore.cli import main

    with pytest.raises(ArgumentError, match="not both"):
        deployment(SPEC, num_replicas=2, autoscaling_config={"max_replicas": 3})
    with pytest.raises(ArgumentError, match="max_batch"):
        deployment(SPEC, max_batch=0)
    assert main(["serve", SPEC, "--replicas", "2"]) == 2
    assert "--replicas and --autoscaling-config need --ray" in capsys.readouterr().err
    assert main(["serve", SPEC, "--ray", "--replicas", "2", "--autoscaling-config", '{"max_replicas": 3}']) == 2
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize("cluster", ["busy", "own"])
def test_sigterm_exits_within_the_drain_timeout_while_ray_is_starting_the_replicas(cluster):
    """SIGTERM during a start-up exits 0 within the drain timeout and leaves none of the processes
    it started: ``busy``, a start-up Ray never finishes (no free CPU for the replica: Serve waits
    for ever); ``own``, the Ray that ``nlgscore serve --ray`` starts itself (whose core installs
    its own SIGTERM handler, which aborts and leaves Ray running), while the replica loads."""
    drain, slack = 3.0, 20.0  # slack: the timer thread's wake-up and the kills on a loaded 2-core machine
    settings = {"busy": {"cpus": 2, "hog": 2}, "own": {"cpus": 0}}[cluster]
    server = _serve(["bertscore:minilm", "--ray", "--port", str(_free_port())], drain=drain, **settings)
    output = Output(server.stderr, "Started Serve")
    try:
        assert output.ready.wait(HARD_TIMEOUT) and server.poll() is None, output.tail()
        time.sleep(2)  # serve.run is now waiting for the replica
        if cluster == "busy":  # Ray cannot place it
            assert not any(cmd.startswith(REPLICA_TITLE) for cmd in _descendants(server.pid).values())
        before = set(_descendants(server.pid))
        assert before  # the local Ray's GCS, raylet, Serve's controller and proxy
        server.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        assert server.wait(timeout=drain + slack) == 0, output.tail()
        print(f"exited {time.monotonic() - sent:.1f} s after SIGTERM (drain timeout {drain:g} s)")
        time.sleep(1)
        left = {pid for pid in before if _running(pid)}
        assert not left, f"processes left running: {left}"
    finally:
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        server.wait()
        output.thread.join(10)
