"""How ``nlgscore serve`` decides the cases where a process or a client fails, on real servers:

* a model process that dies under ``--workers`` is started again (``/health`` and scoring answer
  503 meanwhile), and the server scores with the same bits after it;
* ``--drain-timeout`` is what the requests in flight get, in both server modes;
* the bearer scheme is case-insensitive (RFC 9110, 11.1);
* the IPC folder of a server killed outright is removed by the next one.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time

import pytest
from servers import ServeProcess

import nlgscore

httpx = pytest.importorskip("httpx")
pytest.importorskip("zmq")

SPEC = "chrf"


def model_pid(proc):
    from test_serve_workers import model_and_workers

    return model_and_workers(proc)[0]


def test_a_dead_model_process_is_started_again_and_scores_the_same_bits():
    with ServeProcess(SPEC, "--workers", "2", "--threads", "1") as proc:
        proc.wait_ready()
        body = {"predictions": ["the cat sat", "a dog"], "references": ["a cat sat", "the dog"]}
        before = proc.post("/v1/score", json=body).json()
        first = model_pid(proc)
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while proc.get("/health").status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        answer = proc.post("/v1/score", json=body)
        assert answer.status_code == 503 and answer.headers["retry-after"]
        proc.wait_ready(60)  # started again after its back-off, its scorer loaded
        assert model_pid(proc) != first
        assert proc.post("/v1/score", json=body).json() == before
        assert "is serving again" in proc.output()


@pytest.mark.parametrize("mode", [(), ("--workers", "2")], ids=["one-process", "workers"])
def test_the_requests_in_flight_get_the_whole_drain_timeout(mode):
    """A request running when SIGTERM comes is answered, not cut, when it finishes within
    --drain-timeout: the stop's own tail (closing connections, the model process) comes after.
    The request takes 1.5 s (a metric that sleeps), the drain 2 s: a drain that kept 1 s or more
    of --drain-timeout for the stop would cut it."""
    with ServeProcess("sleepychrf", "--drain-timeout", "2", "--threads", "1", *mode, sleep=1.5) as proc:
        proc.wait_ready()
        answers = {}

        def post():
            answers["long"] = proc.post("/v1/score", json={"predictions": ["the cat sat"], "references": ["a cat"]})

        thread = threading.Thread(target=post)
        thread.start()
        time.sleep(0.3)  # in the server, running
        proc.proc.send_signal(signal.SIGTERM)
        thread.join(60)
        assert proc.proc.wait(60) == 0, proc.output()
        assert answers["long"].status_code == 200, answers["long"].text
        assert answers["long"].json()["scores"] == nlgscore.load("chrf").compute(["the cat sat"], ["a cat"]).scores


def test_the_bearer_scheme_is_case_insensitive(tmp_path):
    key = tmp_path / "key"
    key.write_text("s3cret\n", encoding="utf-8")
    with ServeProcess(SPEC, "--api-key-file", str(key)) as proc:
        proc.wait_listening()
        body = {"predictions": ["a"], "references": ["a"]}
        for header in ("Bearer s3cret", "bearer s3cret", "BEARER s3cret"):
            deadline = time.monotonic() + 60
            while (answer := proc.post("/v1/score", json=body, headers={"Authorization": header})).status_code == 503:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert answer.status_code == 200, (header, answer.text)
        for header in ("Basic s3cret", "Bearer wrong", "s3cret"):
            assert proc.post("/v1/score", json=body, headers={"Authorization": header}).status_code == 401


def test_the_ipc_folder_of_a_killed_server_is_removed_by_the_next():
    from nlgscore.serve.workers.supervisor import FOLDER_PREFIX

    root = tempfile.gettempdir()

    def folders_of(pid):
        return [name for name in os.listdir(root) if name.startswith(f"{FOLDER_PREFIX}{pid}-")]

    with ServeProcess(SPEC, "--workers", "2", "--threads", "1") as first:
        first.wait_ready()
        pid = first.proc.pid
        assert folders_of(pid)  # its socket's folder
        first.proc.kill()  # no clean-up of its own
        first.proc.wait(30)
    assert folders_of(pid)
    with ServeProcess(SPEC, "--workers", "2", "--threads", "1") as second:
        second.wait_ready()
        assert not folders_of(pid)
        assert second.terminate() == 0
    assert not folders_of(second.proc.pid)  # removed at a clean exit
