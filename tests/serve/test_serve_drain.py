"""A server no client can hold and no setting can stall: references count against --max-items,
a connection that stalls in its headers is closed, SIGTERM answers 503 to what it cuts and ends
within --drain-timeout while the ROLL tasks it accepted can still be polled, and flags that a
mode cannot honour are refused naming the flag. Real servers on loopback ports (tests/servers.py)."""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest
from servers import ServeProcess

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"


def test_flags_a_mode_cannot_honour_are_refused_naming_the_flag(capsys):
    from nlgscore.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["serve", SPEC, "--threads", "99999999999999999999"])
    assert exit_.value.code == 2 and "--threads" in capsys.readouterr().err
    for flag, value in (
        ("--max-concurrent", "1"),
        ("--body-timeout", "5"),
        ("--threads", "2"),
        ("--header-timeout", "5"),
    ):
        assert main(["serve", SPEC, "--ray", flag, value]) == 2
        err = capsys.readouterr().err
        assert f"{flag} is not applied under --ray" in err and len(err.strip().splitlines()) == 1, err


def test_references_count_against_max_items_and_stalled_headers_are_closed():
    with ServeProcess(SPEC, "--max-items", "4", "--header-timeout", "1", "--threads", "1") as proc:
        proc.wait_ready()
        ok = proc.post("/v1/score", json={"predictions": ["It is cold."], "references": [["It is cold today."] * 4]})
        assert ok.status_code == 200, ok.text
        many = proc.post("/v1/score", json={"predictions": ["It is cold."], "references": [["It is cold today."] * 5]})
        assert (
            many.status_code == 413 and "5 references" in many.json()["error"] and "--max-items" in many.json()["error"]
        )
        slime = proc.post(
            "/v1/reward", json={"prompt": "p", "response": "It is cold.", "label": ["a", "b", "c", "d", "e"]}
        )
        assert slime.status_code == 413, slime.text

        sock = socket.create_connection(("127.0.0.1", proc.port))
        sock.sendall(b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Le")  # and nothing more
        sock.settimeout(30)
        start = time.monotonic()
        assert sock.recv(100) == b""  # closed by the server
        assert time.monotonic() - start < 20  # 1 s of --header-timeout; the rest is a loaded machine's slack
        sock.close()
        idle = socket.create_connection(("127.0.0.1", proc.port))  # not a byte sent
        idle.settimeout(30)
        assert idle.recv(100) == b""
        idle.close()
        assert proc.get("/health").status_code == 200  # the server itself goes on


def test_sigterm_answers_503_to_what_it_cuts_within_the_drain_timeout_and_roll_polls_go_on():
    drain = 4.0
    with ServeProcess(
        SPEC, "--drain-timeout", str(drain), "--threads", "1", "--max-wait-ms", "0", "--max-items", "40000"
    ) as proc:
        proc.wait_ready()
        row = {"prompt": "p", "response": "It is cold.", "reward_info": {"ground_truth": "It is cold today."}}
        key = proc.post("/roll/submit_task", json=row).json()["reward_request_id"]
        answers = {}

        def post(name, path, body):
            answers[name] = httpx.post(proc.url + path, json=body, timeout=120)

        many = [
            f"word{i} sat on the mat number {i} today beside word{i * 7}" for i in range(40000)
        ]  # minutes of work on one thread
        long = threading.Thread(
            target=post, args=("long", "/v1/score", {"predictions": ["It is cold."], "references": [many]})
        )
        long.start()
        time.sleep(1.0)  # the long call is on the model; the next call waits behind it
        queued = threading.Thread(
            target=post, args=("score", "/v1/score", {"predictions": ["It is cold."], "references": ["It is."]})
        )
        queued.start()
        time.sleep(0.5)
        start = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        refused = proc.post("/v1/score", json={"predictions": ["a"], "references": ["b"]})
        assert refused.status_code == 503 and refused.headers["retry-after"]
        polled = httpx.get(
            f"{proc.url}/roll/task_result", params={"reward_request_id": key}, timeout=30
        ).json()  # a query-string poll
        assert polled["errcode"] == 0 and 0 < polled["reward_score"] <= 1, polled
        long.join(60)
        queued.join(60)
        assert proc.proc.wait(60) == 0, proc.output()
        # the stop is bounded by --drain-timeout; the slack is the process's own exit on a loaded 2-core machine
        assert time.monotonic() - start < drain + 6, proc.output()
        for name in ("long", "score"):
            assert answers[name].status_code == 503 and "--drain-timeout" in answers[name].json()["error"], (
                name,
                answers[name].text,
            )
