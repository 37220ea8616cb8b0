"""Ray Serve on a local Ray instance (nothing mocked): ``nlgscore.serve.ray.deployment`` with two
MiniLM replicas behind Ray's HTTP proxy serves the ``nlgscore serve`` app; concurrent clients get
exactly ``compute``'s scores; requests are merged by ``@serve.batch``; a replica killed
(``ray.kill``) while requests are in flight loses nothing: its failed requests are sent again by
the client and every request's scores come back once, in order.

A hard timeout (SIGALRM) bounds the test, and Serve and Ray are shut down whatever happens.
"""

from __future__ import annotations

import concurrent.futures
import re
import signal
import socket
import time

import pytest

ray = pytest.importorskip("ray", reason="Ray Serve is the 'ray' extra: pip install 'nlgscore[ray]'")
serve = pytest.importorskip("ray.serve", reason="Ray Serve is the 'ray' extra: pip install 'nlgscore[ray]'")
httpx = pytest.importorskip("httpx", reason="the client is the 'serve' extra")

from nlgscore.core.errors import ArgumentError  # noqa: E402
from nlgscore.registry import load  # noqa: E402
from nlgscore.serve.ray import deployment, replica_names  # noqa: E402

SPEC = "bertscore:minilm:L2"
HARD_TIMEOUT = 240  # seconds; a quiet machine takes ~45 s, a loaded one more
N = 40  # requests, two predictions each
PREDS = [[f"the {w} number {k} sat on the mat", f"a {w} slept {k % 4} hours"] for k, w in enumerate(["cat", "dog", "cow", "fox"] * (N // 4))]
REFS = [[f"a {w} was sitting on a mat", f"the {w} slept all day"] for w in ["cat", "dog", "bird", "fox"] * (N // 4)]


class HardTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise HardTimeout(f"the Ray Serve test took over {HARD_TIMEOUT} s")


@pytest.fixture(scope="module")
def serve_port():
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HARD_TIMEOUT)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 1024 * 1024,
                 runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}})
        for attempt in range(3):  # a free port picked here can be taken before the proxy binds it
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            try:
                serve.start(http_options={"host": "127.0.0.1", "port": port})
                break
            except RuntimeError:
                serve.shutdown()
                if attempt == 2:
                    raise
        yield port
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def _post_with_retries(client, url, body, attempts=30):
    """One request, sent again after a 5xx or a broken connection (a killed replica's requests)."""
    for attempt in range(attempts):
        try:
            response = client.post(url, json=body, timeout=60)
            if response.status_code < 500:
                return response, attempt
        except httpx.TransportError:
            pass
        time.sleep(min(0.1 * 2 ** attempt, 2.0))
    raise AssertionError(f"no answer after {attempts} attempts")


def test_two_replicas_score_like_compute_and_a_killed_replica_loses_nothing(serve_port):
    base = f"http://127.0.0.1:{serve_port}"
    app = deployment(SPEC, num_replicas=2, ray_actor_options={"num_cpus": 0.5}, max_batch=16, max_wait_ms=30)
    serve.run(app, name="nlgscore", route_prefix="/")
    assert len(replica_names()) == 2
    with httpx.Client() as client:
        health = client.get(f"{base}/health").json()
        assert health["status"] == "ok" and health["metric"] == "bertscore"
        assert client.post(f"{base}/v1/score", json={"predictions": ["a", "b"], "references": ["c"]}).status_code == 400

        victim = replica_names()[0]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(_post_with_retries, client, f"{base}/v1/score", {"predictions": PREDS[k], "references": REFS[k]}) for k in range(N)]
            while sum(f.done() for f in futures) < 4:  # the load is under way: kill a replica in the middle of it
                time.sleep(0.01)
            ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
            answers = [f.result() for f in futures]
        assert victim not in replica_names()
        retried = sum(attempt > 0 for _, attempt in answers)

        expected = load(SPEC).compute([p for ps in PREDS for p in ps], references=[r for rs in REFS for r in rs])
        got = []
        for response, _ in answers:
            assert response.status_code == 200, response.text
            body = response.json()
            assert len(body["scores"]) == 2 and body["signature"] == str(expected.signature)
            got.extend(body["scores"])
        assert got == pytest.approx(expected.scores, abs=1e-6)  # every request once, in order, equal to compute

        merged = 0.0
        for _ in range(6):  # /metrics of whichever replica answers: some requests were merged by @serve.batch
            text = client.get(f"{base}/metrics").text
            calls = re.search(r"^nlgscore_batch_calls_sum ([0-9.e+]+)$", text, re.M)
            count = re.search(r"^nlgscore_batch_calls_count ([0-9.e+]+)$", text, re.M)
            if calls and count and float(count.group(1)):
                merged = max(merged, float(calls.group(1)) / float(count.group(1)))
        assert merged > 1, "no replica merged two requests into one batch"
    print(f"retried requests after the kill: {retried}")


def test_deployment_arguments_are_checked_before_anything_starts():
    with pytest.raises(ArgumentError, match="not both"):
        deployment(SPEC, num_replicas=2, autoscaling_config={"max_replicas": 3})
    with pytest.raises(ArgumentError, match="max_batch"):
        deployment(SPEC, max_batch=0)
    with pytest.raises(ArgumentError, match="no_such_metric|unknown|metric"):
        deployment("no_such_metric")
