"""``nlgscore serve --workers 2``: every endpoint and RL protocol through two HTTP worker
processes and one model process, with the offline bits (``==``, float32 and bfloat16); refusals
counted across workers; a killed worker started again; a dead model process answered 503; SIGTERM
answering 503 to what it cuts, within --drain-timeout. Real servers on loopback ports
(tests/servers.py); the worker, model and parent processes are found through /proc."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from servers import ServeProcess

import nlgscore
from nlgscore.serve.workers.supervisor import MODEL_NAME, WORKER_NAME

httpx = pytest.importorskip("httpx")
pytest.importorskip("zmq")
pytest.importorskip("msgspec")
pytestmark = pytest.mark.filterwarnings("ignore:BERTScore. 1 empty candidate")  # the empty candidate is meant

SPEC = "bertscore:minilm:L2"
PREDS = [f"The {w} sat on mat {i}." for i, w in enumerate(["cat", "dog", "bird", "fox", "cow", "owl"] * 2)] + [
    "",
    "A long " + "word " * 60,
]
REFS = [f"A {w} is on the mat." for w in ["cat", "dog", "bird"] * 4] + ["A cat is on the mat.", "A dog is on the mat."]
DRAIN = 5.0


def children(pid: int) -> dict:
    """The child processes of ``pid``: {pid: resident KiB}."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                rss = [line for line in (entry / "status").read_text().splitlines() if line.startswith("VmRSS")]
                found[int(entry.name)] = int(rss[0].split()[1]) if rss else 0
        except (OSError, IndexError, ValueError):
            continue
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for its new parent to reap does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def model_and_workers(proc: ServeProcess):
    """The model process and the workers, by the names ps and top show."""
    names = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in children(proc.proc.pid)}
    [model] = [pid for pid, name in names.items() if name == MODEL_NAME]
    workers = sorted(pid for pid, name in names.items() if name.startswith(WORKER_NAME))
    return model, workers


@pytest.fixture(scope="module")
def server():
    proc = ServeProcess(
        SPEC,
        "--workers",
        "2",
        "--threads",
        "1",
        "--max-batch",
        "8",
        "--max-wait-ms",
        "20",
        "--max-concurrent",
        "16",
        "--drain-timeout",
        str(DRAIN),
        "--max-items",
        "40000",
    )
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.close()


def _concurrent(url, requests):
    async def main():
        async with httpx.AsyncClient(
            base_url=url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0)
        ) as client:
            return await asyncio.gather(*(client.request(method, path, json=body) for method, path, body in requests))

    return asyncio.run(main())


def test_every_endpoint_answers_with_the_offline_bits(server):
    local = nlgscore.load(SPEC)
    offline = local.compute(PREDS, REFS)
    answers = _concurrent(
        server.url, [("POST", "/v1/score", {"predictions": [p], "references": [r]}) for p, r in zip(PREDS, REFS)]
    )
    assert [
        a.json()["scores"][0] for a in answers
    ] == offline.scores  # merged by the model process, across both workers
    whole = server.post("/v1/score", json={"predictions": PREDS, "references": REFS}).json()
    assert whole["scores"] == offline.scores and whole["columns"]["precision"] == list(offline.precision)
    assert whole["signature"] == str(offline.signature)
    grid = server.post("/v1/matrix", json={"predictions": PREDS[:4], "references": REFS[4:8]}).json()
    assert np.array_equal(np.asarray(grid["matrix"]), local.matrix(PREDS[:4], REFS[4:8]))
    reward = server.post(
        "/get_reward", json={"query": ["Q: " + PREDS[0]], "prompts": ["Q: "], "labels": [REFS[0]]}
    ).json()
    assert reward["rewards"] == offline.scores[:1]
    assert (
        server.post("/v1/reward", json={"prompt": "p", "response": PREDS[1], "label": REFS[1]}).json()
        == offline.scores[1]
    )
    group = [{"prompt": "p", "response": p, "label": r} for p, r in zip(PREDS[:3], REFS[:3])]
    assert server.post("/v1/reward", json=group).json() == offline.scores[:3]
    assert server.post("/seed_session", json={}).json() == {}
    row = {
        "responses_create_params": {"input": "p"},
        "expected_answer": REFS[2],
        "response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": PREDS[2]}]}]},
    }
    assert server.post("/verify", json=row).json()["reward"] == offline.scores[2]
    keys = [
        server.post(
            "/roll/submit_task", json={"prompt": "p", "response": p, "reward_info": {"ground_truth": r}}
        ).json()["reward_request_id"]
        for p, r in zip(PREDS[:4], REFS[:4])
    ]
    got = []
    for key in keys:  # each poll a new connection: any worker answers it
        for _ in range(200):
            answer = httpx.get(f"{server.url}/roll/task_result", params={"reward_request_id": key}, timeout=30).json()
            if answer["errcode"] != 1:
                break
            time.sleep(0.05)
        got.append(answer["reward_score"])
    assert got == offline.scores[:4]
    bad = server.post("/v1/score", json={"predictions": ["a", "b"], "references": ["c"]})
    assert bad.status_code == 400 and "references" in bad.json()["error"]
    assert server.post("/v1/score", json={"predictions": ["a"], "references": [["r"] * 40001]}).status_code == 413
    remote = nlgscore.load(server.url)
    assert remote.compute(PREDS, REFS).scores == offline.scores
    text = server.get("/metrics").text
    assert (
        'nlgscore_requests_total{endpoint="/v1/score",status="200"}' in text
        and "nlgscore_compute_seconds_count" in text
    )
    # The bits above were scored from the workers' token ids, not the model process's tokenizer.
    tokenized = [line for line in text.splitlines() if line.startswith("nlgscore_worker_tokenized_texts_total ")]
    assert tokenized and float(tokenized[0].split()[1]) >= 2 * len(PREDS)


def test_overload_is_429_with_retry_after_across_workers(server):
    words = [f"word{i} sat on the mat number {i} today" for i in range(300)]
    answers = _concurrent(server.url, [("POST", "/v1/score", {"predictions": words, "references": words})] * 24)
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {200, 429} and 429 in statuses and 200 in statuses, statuses
    assert all(a.headers["retry-after"] for a in answers if a.status_code == 429)


def test_a_killed_worker_is_started_again(server):
    model, workers = model_and_workers(server)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    for _ in range(100):  # the parent notices within its tick and forks a new one
        now = model_and_workers(server)
        if len(now[1]) == 2 and workers[0] not in now[1]:
            break
        time.sleep(0.1)
    assert now[0] == model and len(now[1]) == 2 and workers[0] not in now[1]
    local = nlgscore.load(SPEC)
    answers = _concurrent(
        server.url, [("POST", "/v1/score", {"predictions": [p], "references": [r]}) for p, r in zip(PREDS, REFS)]
    )
    assert [a.json()["scores"][0] for a in answers] == local.compute(PREDS, REFS).scores


def _worker_tokenized(server) -> float:
    """Texts the model process has scored from its workers' token ids (``/metrics``)."""
    for line in server.get("/metrics").text.splitlines():
        if line.startswith("nlgscore_worker_tokenized_texts_total "):
            return float(line.split()[1])
    return 0.0


def test_sigterm_answers_503_to_what_it_cuts_within_the_drain_timeout(server):
    many = [
        f"word{i} sat on the mat number {i} today beside word{i * 7}" for i in range(40000)
    ]  # minutes of work on one thread
    answers = {}

    def post(name, body):
        answers[name] = httpx.post(server.url + "/v1/score", json=body, timeout=120)

    tokenized = _worker_tokenized(server)
    long = threading.Thread(target=post, args=("long", {"predictions": ["It is cold."], "references": [many]}))
    long.start()
    # The long call is in the model process once its worker's token ids are used there.
    deadline = time.monotonic() + 60
    while _worker_tokenized(server) < tokenized + len(many) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    queued = threading.Thread(target=post, args=("queued", {"predictions": ["It is cold."], "references": ["It is."]}))
    queued.start()
    time.sleep(0.5)
    start = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    long.join(60)
    queued.join(60)
    assert server.proc.wait(60) == 0, server.output()
    assert time.monotonic() - start < DRAIN + 5, server.output()  # the slack: process exits on a loaded 2-core machine
    for name in ("long", "queued"):
        assert answers[name].status_code == 503 and "--drain-timeout" in answers[name].json()["error"], (
            name,
            answers[name].text,
        )
    assert not children(server.proc.pid)


def test_bf16_bits_and_a_dead_model_process_answers_503():
    with ServeProcess(
        SPEC, "--workers", "2", "--threads", "1", "--dtype", "bfloat16", "--max-batch", "8", "--max-wait-ms", "20"
    ) as proc:
        proc.wait_ready()
        offline = nlgscore.load(SPEC, dtype="bfloat16").compute(PREDS, REFS)
        answers = _concurrent(
            proc.url, [("POST", "/v1/score", {"predictions": [p], "references": [r]}) for p, r in zip(PREDS, REFS)]
        )
        assert [a.json()["scores"][0] for a in answers] == offline.scores
        model, _ = model_and_workers(proc)
        os.kill(model, signal.SIGKILL)
        time.sleep(1.0)  # the parent's tick
        health = proc.get("/health")
        assert health.status_code == 503 and "model process" in health.json()["error"]
        scored = proc.post("/v1/score", json={"predictions": ["a"], "references": ["b"]})
        assert scored.status_code == 503 and scored.headers["retry-after"]
        workers = list(children(proc.proc.pid))
        proc.proc.kill()  # a parent killed outright leaves no worker behind
        proc.proc.wait(30)
        for _ in range(150):
            if not any(running(pid) for pid in workers):
                break
            time.sleep(0.1)
        assert not any(running(pid) for pid in workers), workers
