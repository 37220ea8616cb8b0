"""A server that sizes itself: overload is 429 (never 500), a stalled client is cut, SIGTERM ends
within ``--drain-timeout`` even while a client holds an unfinished body, ``/metrics`` keeps queue
and compute times apart. Real servers (subprocesses on loopback ports, tests/servers.py)."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import time

import numpy as np
import pytest
from servers import ServeProcess

import nlgscore

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"
PREDS = [f"The {w} sat on mat {i}." for i, w in enumerate(["cat", "dog", "bird", "fox"] * 6)]
REFS = [f"A {w} is on the mat." for w in ["cat", "dog", "bird", "fox"] * 6]


def _stall(port: int, path: str = "/v1/score") -> socket.socket:
    """A client that sends its headers and 10 of the 100 body bytes it announced, then nothing."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
        + b'{"predicti'
    )
    return sock


def test_overload_is_429_a_stalled_body_is_408_and_metrics_keep_queue_and_compute_apart():
    flags = (
        "--max-concurrent",
        "3",
        "--max-wait-ms",
        "1000",
        "--max-batch",
        "64",
        "--body-timeout",
        "1",
        "--threads",
        "1",
    )
    with ServeProcess(SPEC, *flags) as proc:
        proc.wait_ready()

        async def burst():
            async with httpx.AsyncClient(base_url=proc.url, timeout=60) as client:
                return await asyncio.gather(
                    *(
                        client.post("/v1/score", json={"predictions": [p], "references": [r]})
                        for p, r in zip(PREDS, REFS)
                    )
                )

        answers = asyncio.run(burst())
        statuses = [a.status_code for a in answers]
        assert set(statuses) <= {200, 429} and 429 in statuses and 200 in statuses, statuses  # never a 500
        assert all(a.headers["retry-after"] for a in answers if a.status_code == 429)
        ok = [k for k, s in enumerate(statuses) if s == 200]
        expected = nlgscore.load(SPEC).compute([PREDS[k] for k in ok], [REFS[k] for k in ok]).scores
        np.testing.assert_allclose(
            [answers[k].json()["scores"][0] for k in ok], expected, rtol=0, atol=1e-6
        )  # as tests/serve/test_serve.py

        sock = _stall(proc.port)  # --body-timeout 1: answered 408 instead of holding a slot
        sock.settimeout(30)
        assert sock.recv(200).startswith(b"HTTP/1.1 408")
        sock.close()

        text = proc.get("/metrics").text
        for name in ("nlgscore_queue_seconds_count", "nlgscore_compute_seconds_count"):
            assert float(re.search(rf"^{name} (\S+)$", text, re.M).group(1)) >= 1, name
        queued = float(re.search(r"^nlgscore_queue_seconds_sum (\S+)$", text, re.M).group(1))
        # each scored request's wait timed once (an idle worker takes the first at once, so the sum may be small)
        assert float(re.search(r"^nlgscore_queue_seconds_count (\S+)$", text, re.M).group(1)) == len(ok) and queued > 0
        assert float(
            re.search(r'^nlgscore_dropped_total\{reason="overload"\} (\S+)$', text, re.M).group(1)
        ) == statuses.count(429)
        assert float(re.search(r'^nlgscore_dropped_total\{reason="disconnect"\} (\S+)$', text, re.M).group(1)) >= 1
        assert float(re.search(r"^nlgscore_pairs_per_second (\S+)$", text, re.M).group(1)) > 0

        # The same overload through RemoteScorer: each 429 is retried after its Retry-After, so every
        # reward comes back (a trainer backs off instead of failing); the server did answer 429s.
        remote = nlgscore.load(proc.url, retries=10, backoff=0.05)

        async def rewards():
            return await asyncio.gather(*(remote.acompute([p], [r]) for p, r in zip(PREDS[:12], REFS[:12])))

        got = [result.scores[0] for result in asyncio.run(rewards())]
        np.testing.assert_allclose(
            got, nlgscore.load(SPEC).compute(PREDS[:12], REFS[:12]).scores, rtol=0, atol=1e-6
        )  # as above
        again = float(
            re.search(r'^nlgscore_dropped_total\{reason="overload"\} (\S+)$', proc.get("/metrics").text, re.M).group(1)
        )
        assert again > statuses.count(429)  # some of the 12 were refused, then retried
        assert proc.terminate() == 0, proc.output()


def test_a_stalled_client_cannot_hold_sigterm_past_the_drain_timeout():
    with ServeProcess(SPEC, "--drain-timeout", "2", "--body-timeout", "600") as proc:
        proc.wait_ready()
        sock = _stall(proc.port)
        time.sleep(0.5)  # the request is in the app, waiting for the rest of its body
        start = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        assert proc.proc.wait(60) == 0, proc.output()
        # 2 s of drain, then uvicorn cuts the request; the rest is the shutdown itself (slow only on a loaded machine)
        assert time.monotonic() - start < 30, proc.output()
        sock.close()


def test_threads_default_to_usable_cpus_minus_one(monkeypatch):
    """The thread count reaches the process that builds the model as an argument, not through the
    environment: --threads, else NLGSCORE_THREADS, else the usable CPUs less one per HTTP process."""
    from nlgscore.backend import threads
    from nlgscore.cli import main
    from nlgscore.cli import serve as serve_cli
    from nlgscore.serve.http import server

    seen = {}
    given = serve_cli.model_builder

    def builder(spec, options, count):
        seen["threads"] = count
        return given(spec, options, count)

    monkeypatch.delenv(threads.ENV, raising=False)
    monkeypatch.setattr(serve_cli, "model_builder", builder)
    monkeypatch.setattr(server, "run_server", lambda *a, **k: seen.update(drain=k["drain_timeout"]) or 0)
    assert main(["serve", SPEC, "--port", "0"]) == 0
    assert seen == {"threads": max(1, threads.available_cpus() - 1), "drain": 30.0}
    assert threads.ENV not in __import__("os").environ  # nothing handed through the environment
    assert main(["serve", SPEC, "--port", "0", "--threads", "3", "--drain-timeout", "5"]) == 0
    assert seen == {"threads": 3, "drain": 5.0}
    monkeypatch.setenv(threads.ENV, "2")
    assert main(["serve", SPEC, "--port", "0"]) == 0
    assert seen["threads"] == 2


def test_the_model_builder_sets_the_threads_before_it_builds(monkeypatch):
    from nlgscore.backend import threads
    from nlgscore.cli.serve import model_builder

    counts = []
    monkeypatch.setattr(threads, "limit_threads", lambda count=None: counts.append(count) or 1)
    scorer = model_builder("chrf", {}, 3)()
    assert counts == [3] and scorer.name == "chrf"


def test_serve_flag_mistakes_are_one_line_and_exit_2(tmp_path, capsys):
    from nlgscore.cli import main

    key = tmp_path / "key"
    key.write_bytes(b"\xff\xfe secret")
    assert main(["serve", SPEC, "--api-key-file", str(key)]) == 2
    err = capsys.readouterr().err
    assert "--api-key-file" in err and "not UTF-8" in err and len(err.strip().splitlines()) == 1
    assert main(["serve", SPEC, "--port", "70000"]) == 2
    err = capsys.readouterr().err
    assert "--port must be 0-65535, got 70000" in err and len(err.strip().splitlines()) == 1
