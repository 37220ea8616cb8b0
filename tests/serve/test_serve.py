"""``nlgscore serve``: a real server (subprocess, loopback port) and real clients.

Server A serves BERTScore (MiniLM, layer 2) for the scoring, protocol and bad-request checks and
for the clients (RemoteScorer through MBR, the TRL reward in a real GRPOTrainer step). Server B
loads its model behind a gate (tests/servers.py) to show /health at 503 while loading, and
requires a bearer token; it also takes the queue-full and SIGTERM checks.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import re
import threading
import time

import numpy as np
import pytest
from servers import ServeProcess

import nlgscore
from nlgscore.errors import ArgumentError, ArgumentTypeError

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"
PREDS = [f"The {w} sat on mat {i}." for i, w in enumerate(["cat", "dog", "bird", "fox", "cow", "owl"] * 8)]
REFS = [f"A {w} is on the mat." for w in ["cat", "dog", "bird"] * 16]


@pytest.fixture(scope="module")
def local():
    return nlgscore.load(SPEC)


@pytest.fixture(scope="module")
def server():
    with ServeProcess(
        SPEC, "--max-batch", "16", "--max-wait-ms", "20", "--max-body-bytes", "20000", "--max-items", "100"
    ) as proc:
        proc.wait_ready()
        yield proc
        assert proc.terminate() == 0, proc.output()


@pytest.fixture(scope="module")
def kernel_servers():
    """One server of SPEC per NLGSCORE_ONEDNN value, started on first use under that value (the
    ``kernel`` fixture sets it; the server process inherits it) and stopped with the module."""
    servers = {}
    yield servers
    for proc in servers.values():
        assert proc.terminate() == 0, proc.output()
        proc.close()


def test_served_scores_are_the_offline_bits_under_each_kernel(kernel, kernel_servers):
    """Requests merged by the micro-batcher in the server get the bits one offline call gives:
    an item's score is a function of the item, under either kernel and thread count."""
    if kernel.onednn not in kernel_servers:
        kernel_servers[kernel.onednn] = ServeProcess(SPEC, "--max-batch", "16", "--max-wait-ms", "20")
        kernel_servers[kernel.onednn].wait_ready()
    server = kernel_servers[kernel.onednn]

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            return await asyncio.gather(
                *(
                    client.post("/v1/score", json={"predictions": [p], "references": [r]})
                    for p, r in zip(PREDS[:16], REFS[:16])
                )
            )

    served = [a.json()["scores"][0] for a in asyncio.run(main())]
    assert served == nlgscore.load(SPEC).compute(PREDS[:16], REFS[:16]).scores


def _metric(text: str, name: str) -> float:
    return float(re.search(rf"^{re.escape(name)} (\S+)$", text, re.M).group(1))


def test_concurrent_clients_get_compute_scores(server, local):
    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            answers = await asyncio.gather(
                *(client.post("/v1/score", json={"predictions": [p], "references": [r]}) for p, r in zip(PREDS, REFS))
            )
        return answers

    answers = asyncio.run(main())
    assert [a.status_code for a in answers] == [200] * len(PREDS)  # none lost
    got = [a.json()["scores"][0] for a in answers]
    expected = local.compute(PREDS, REFS)
    np.testing.assert_allclose(got, expected.scores, rtol=0, atol=1e-6)
    assert {a.json()["signature"] for a in answers} == {str(expected.signature)}
    metrics = server.get("/metrics").text
    assert _metric(metrics, "nlgscore_batch_predictions_count") < len(PREDS)  # merged into fewer batches
    assert _metric(metrics, "nlgscore_predictions_total") >= len(PREDS)
    assert (
        'nlgscore_requests_total{endpoint="/v1/score",status="200"}' in metrics and "nlgscore_queue_length" in metrics
    )


def test_health_and_ragged_references(server, local):
    health = server.get("/health").json()
    assert health["status"] == "ok" and health["metric"] == "bertscore" and health["signature"] == str(local.signature)
    refs = [[r, "Something else."] for r in REFS[:4]]
    body = server.post("/v1/score", json={"predictions": PREDS[:4], "references": refs}).json()
    expected = local.compute(PREDS[:4], refs)
    np.testing.assert_allclose(body["columns"]["precision"], expected.precision, atol=1e-6)


def test_openrlhf_get_reward(server, local):
    prompts = ["Question: what is the weather?\nAnswer:", "Question: where is the cat?\nAnswer:"]
    responses = [" It is cold today.", " The cat is on the mat."]
    labels = ["It is freezing.", "A cat sits on the mat."]
    body = server.post(
        "/get_reward", json={"query": [p + r for p, r in zip(prompts, responses)], "prompts": prompts, "labels": labels}
    ).json()
    assert set(body) == {"rewards", "scores", "extra_logs"}
    np.testing.assert_allclose(body["rewards"], local.compute(responses, labels).scores, atol=1e-6)
    assert body["scores"] == body["rewards"] and body["extra_logs"]["bertscore_f1"] == body["rewards"]


BAD = [
    ("/v1/score", b"{not json", 400, "malformed JSON"),
    ("/v1/score", [1, 2], 400, "JSON object"),
    ("/v1/score", {"references": ["a"]}, 400, "predictions is required"),
    ("/v1/score", {"predictions": "a", "references": ["a"]}, 400, "predictions must be a JSON array"),
    ("/v1/score", {"predictions": [1], "references": ["a"]}, 400, r"predictions\[0\] must be a str"),
    ("/v1/score", {"predictions": ["a", "b"], "references": ["a"]}, 400, "references"),
    ("/v1/score", {"predictions": ["a"]}, 400, "references are required"),
    ("/v1/score", {"predictions": ["a"], "references": ["a"], "refs": ["a"]}, 400, "unknown field.*refs"),
    ("/v1/score", {"predictions": ["a"] * 101, "references": ["a"] * 101}, 413, "--max-items"),
    ("/v1/score", {"predictions": ["a" * 30000], "references": ["a"]}, 413, "--max-body-bytes"),
    ("/get_reward", {"query": ["Q: x A: y"], "prompts": ["Q: z"]}, 400, r"query\[0\] does not start with prompts\[0\]"),
    ("/get_reward", {"query": ["a", "b"], "prompts": ["a"]}, 400, "prompts"),
    ("/v1/matrix", {"predictions": ["a"], "references": ["b"], "column": 3}, 400, "column must be a string"),
    ("/v1/matrix", {"predictions": ["a"], "references": ["b"], "column": "nope"}, 400, "column must be one of"),
    # client mistakes that were 500 "internal error"
    ("/v1/score", b"[" * 5000 + b"]" * 5000, 400, "nested too deeply"),
    ("/v1/score", b'{"predictions": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "nested too deeply"),
    ("/get_reward", {"query": None, "prompts": ["a"]}, 400, "query must be a JSON array of strings, got null"),
    ("/get_reward", {"query": ["a"], "prompts": None}, 400, "prompts must be a JSON array of strings, got null"),
    (
        "/v1/matrix",
        {"predictions": None, "references": ["b"]},
        400,
        "predictions must be a JSON array of strings, got null",
    ),
    (
        "/v1/matrix",
        {"predictions": ["a"], "references": None},
        400,
        "references must be a JSON array of strings, got null",
    ),
    (
        "/v1/score",
        {"predictions": None, "references": ["b"]},
        400,
        "predictions must be a JSON array of strings, got null",
    ),
]


@pytest.mark.parametrize("path, body, status, message", BAD, ids=[m for *_, m in BAD])
def test_bad_requests_get_their_status(server, path, body, status, message):
    answer = server.post(path, content=body) if isinstance(body, bytes) else server.post(path, json=body)
    assert answer.status_code == status and re.search(message, answer.json()["error"]), answer.text


def test_a_chunked_body_without_length_is_cut_at_max_body_bytes(server):
    # No Content-Length to refuse up front: the reader counts the chunks as they come (--max-body-bytes 20000)
    body = json.dumps({"predictions": ["a" * 30000], "references": ["a"]}).encode()
    chunks = (body[i : i + 4096] for i in range(0, len(body), 4096))
    answer = httpx.post(server.url + "/v1/score", content=chunks, timeout=30)
    assert (
        answer.request.headers.get("transfer-encoding") == "chunked" and "content-length" not in answer.request.headers
    )
    assert answer.status_code == 413 and "--max-body-bytes" in answer.json()["error"]
    small = json.dumps({"predictions": ["It is cold."], "references": ["It is cold today."]}).encode()
    whole = httpx.post(server.url + "/v1/score", content=iter([small[:10], small[10:]]), timeout=30)
    assert whole.status_code == 200 and whole.json()["scores"][0] > 0.8  # chunks joined in order


def test_remote_scorer_compute_matrix_and_mbr(server, local):
    remote = nlgscore.load(server.url)
    assert remote.name == "bertscore" and remote.needs == ("references",) and remote.signature == local.signature
    got, expected = remote.compute(PREDS[:6], REFS[:6]), local.compute(PREDS[:6], REFS[:6])
    np.testing.assert_allclose(got.f1, expected.f1, atol=1e-6)
    assert got.primary == "f1" and str(got.signature) == str(expected.signature) and len(got) == 6
    np.testing.assert_allclose(
        remote.matrix(PREDS[:3], REFS[:4], column="recall"),
        local.matrix(PREDS[:3], REFS[:4], column="recall"),
        atol=1e-6,
    )
    items = [{"id": "a", "candidates": PREDS[:4]}, {"id": "b", "candidates": PREDS[4:9]}]
    from nlgscore.mbr import decode

    chosen, expected_choices = decode(remote, items), decode(local, items)
    assert [c.best_index for c in chosen] == [c.best_index for c in expected_choices]
    for c, e in zip(chosen, expected_choices):
        np.testing.assert_allclose(c.expected_utility, e.expected_utility, atol=1e-6)
    copy = pickle.loads(pickle.dumps(remote))
    assert copy.compute(["It is cold."], ["It is cold."]).scores[0] > 0.99
    with pytest.raises(ArgumentTypeError, match=r"references\[0\] must be a str"):  # checked before sending
        remote.compute(["a"], [3])
    with pytest.raises(ArgumentError, match=r"options \[.device.\] cannot be given for the server"):
        nlgscore.load(server.url, device="cpu")


def test_meta_scores_a_server_metric_like_the_local_one(server, local):
    """``nlgscore meta --metric http://...``: the meta engine builds the server's client through the
    one builder with its run options (the run-time ones are the server's) and scores like compute."""
    from nlgscore.meta.engine import Scorers

    scorers = Scorers({"device": None, "batch_size": None, "progress": True})
    scores, signature = scorers.score(server.url, PREDS[:8], REFS[:8])
    np.testing.assert_allclose(scores, local.compute(PREDS[:8], REFS[:8]).f1, atol=1e-6)
    assert signature == str(local.signature)
    with pytest.raises(ArgumentError, match=r"options \[.dtype.\] cannot be given for the server"):
        Scorers({"dtype": "bfloat16"}).score(server.url, PREDS[:2], REFS[:2])


def test_lighteval_metric_and_map_function_against_the_server(server, local):
    from lighteval.models.model_output import ModelResponse
    from lighteval.tasks.requests import Doc

    from nlgscore.integrations.datasets import map_function
    from nlgscore.integrations.lighteval import metric

    docs = [Doc(query="q", choices=[r], gold_index=0) for r in REFS[:3]]
    rows = metric(server.url).compute_sample(docs=docs, responses=[ModelResponse(text=[p]) for p in PREDS[:3]])[
        "bertscore"
    ]
    np.testing.assert_allclose([row["bertscore_f1"] for row in rows], local.compute(PREDS[:3], REFS[:3]).f1, atol=1e-6)
    columns = map_function(server.url)({"prediction": PREDS[:3], "reference": REFS[:3]})
    np.testing.assert_allclose(columns["bertscore_recall"], local.compute(PREDS[:3], REFS[:3]).recall, atol=1e-6)


@pytest.mark.filterwarnings("ignore:.*checkpointing:FutureWarning")  # TRL 1.16 calls the old transformers names
def test_remote_trl_reward_in_a_grpo_step(server, tmp_path):
    """The async remote reward in one real GRPOTrainer step; it equals the local reward."""
    from datasets import Dataset
    from test_trl_rewards import _tiny_policy
    from trl import GRPOConfig, GRPOTrainer

    from nlgscore.integrations.trl import async_reward_function, reward_function

    remote, local_reward = async_reward_function(server.url), reward_function(SPEC)
    assert pickle.loads(pickle.dumps(remote)).__name__ == "bertscore_f1"
    seen = []

    async def recorded(prompts, completions, **kwargs):
        out = await remote(prompts=prompts, completions=completions, **kwargs)
        seen.append((out, local_reward(prompts=prompts, completions=completions, **kwargs)))
        return out

    recorded.__name__ = remote.__name__
    model, tokenizer = _tiny_policy()
    dataset = Dataset.from_dict(
        {
            "prompt": [f"Describe the weather ({i})." for i in range(2)],
            "reference": ["It is cold today.", "The sun is out."],
        }
    )
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=6,
        max_steps=1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        seed=0,
        disable_tqdm=True,
    )
    GRPOTrainer(
        model=model, reward_funcs=[recorded], args=args, train_dataset=dataset, processing_class=tokenizer
    ).train()
    assert seen and all(out == pytest.approx(expected, abs=1e-6) for out, expected in seen)


def test_gated_load_token_queue_full_and_sigterm(tmp_path, local):
    key = tmp_path / "key"
    key.write_text("s3cret\n")
    auth = {"Authorization": "Bearer s3cret"}
    flags = ("--api-key-file", str(key), "--max-wait-ms", "1500", "--max-batch", "64", "--max-queue", "4")
    with ServeProcess("gatedbert:minilm:L2", *flags, gated=True) as proc:
        proc.wait_listening()
        loading = proc.get("/health")
        assert loading.status_code == 503 and loading.json()["status"] == "loading" and loading.headers["retry-after"]
        assert proc.post("/v1/score", json={"predictions": ["a"], "references": ["a"]}, headers=auth).status_code == 503
        waited = {}
        waiting = threading.Thread(
            target=lambda: waited.update(scorer=nlgscore.load(proc.url, api_key="s3cret", backoff=0.05))
        )
        waiting.start()  # a client started while the model loads polls /health until it is ready
        time.sleep(0.3)
        proc.open_gate()
        proc.wait_ready()
        waiting.join(120)
        assert waited["scorer"].compute([PREDS[0]], [REFS[0]]).scores == pytest.approx(
            local.compute([PREDS[0]], [REFS[0]]).scores, abs=1e-6
        )
        with pytest.raises(ArgumentError, match="401.*api_key="):
            nlgscore.load(proc.url, api_key="wrong").compute(["a"], ["a"])
        assert proc.post("/v1/score", json={"predictions": ["a"], "references": ["a"]}).status_code == 401
        assert (
            proc.post(
                "/v1/score", json={"predictions": ["a"], "references": ["a"]}, headers={"Authorization": "Bearer nope"}
            ).status_code
            == 401
        )
        assert proc.get("/metrics", headers=auth).status_code == 200

        answers = {}

        def send(name, preds, refs):
            answers[name] = proc.post("/v1/score", json={"predictions": preds, "references": refs}, headers=auth)

        # An idle worker takes a call at once: a big call keeps it busy, so the next call (it came
        # while the worker was busy) waits for mates (--max-wait-ms 1500) and fills the queue.
        big = threading.Thread(
            target=send, args=("big", [f"{p} ({k})" for k in range(10) for p in PREDS], REFS * 10)
        )  # distinct
        first = threading.Thread(target=send, args=("first", PREDS[:3], REFS[:3]))
        big.start()
        time.sleep(0.2)
        first.start()
        time.sleep(0.5)
        send("full", PREDS[:3], REFS[:3])
        first.join()
        big.join()
        assert (
            answers["full"].status_code == 429
            and answers["full"].headers["retry-after"]
            and "max_queue=4" in answers["full"].json()["error"]
        )
        assert answers["first"].status_code == 200

        # SIGTERM with two requests in flight: both answered, then exit 0
        threads = [threading.Thread(target=send, args=(f"inflight{k}", [PREDS[k]], [REFS[k]])) for k in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        assert proc.terminate() == 0, proc.output()
        for t in threads:
            t.join()
        for k in range(2):
            assert answers[f"inflight{k}"].status_code == 200
            assert answers[f"inflight{k}"].json()["scores"][0] == pytest.approx(
                local.compute([PREDS[k]], [REFS[k]]).scores[0], abs=1e-6
            )
        with pytest.raises(httpx.ConnectError):
            proc.get("/health")


def test_timeout_is_504_in_process(local):
    from starlette.testclient import TestClient

    from nlgscore.serve.http.app import create_app, wait_ready

    with TestClient(create_app(local, timeout=0.05)) as client:  # 1,000 distinct pairs take longer than 50 ms anywhere
        wait_ready(client)
        answer = client.post(
            "/v1/score", json={"predictions": [f"item {i}" for i in range(1000)], "references": ["a"] * 1000}
        )
    assert answer.status_code == 504 and "--timeout" in answer.json()["error"]


def test_exposure_port_in_use_and_a_model_that_cannot_load_exit_2(capsys):
    import socket

    from nlgscore.cli import main

    assert main(["serve", SPEC, "--host", "0.0.0.0"]) == 2
    assert "--api-key-file" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        assert main(["serve", SPEC, "--port", str(taken.getsockname()[1])]) == 2  # refused before any model loads
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err
    assert (
        main(["serve", "bertscore:/no/such/model", "--port", "0"]) == 2
    )  # the server stops when its model cannot load
    assert "model folder '/no/such/model' does not exist" in capsys.readouterr().err


def test_a_source_based_metric_reads_the_prompt(golden_dir):
    """Prism-src (tiny checkpoint) behind the real app: /get_reward scores each response against its
    prompt when no labels are sent; /v1/score takes sources."""
    from starlette.testclient import TestClient

    from nlgscore.serve.http.app import create_app, wait_ready

    prism = nlgscore.load(f"prism:src:{golden_dir / 'tiny-prism'}")
    prompts, responses = ["Translate: the cat.", "Translate: a dog."], [" le chat.", " un chien."]
    expected = prism.compute(responses, sources=prompts).scores
    with TestClient(create_app(prism)) as client:
        assert wait_ready(client)["needs"] == ["sources"]
        reward = client.post(
            "/get_reward", json={"query": [p + r for p, r in zip(prompts, responses)], "prompts": prompts}
        ).json()
        scored = client.post("/v1/score", json={"predictions": responses, "sources": prompts}).json()
        missing = client.post("/v1/score", json={"predictions": responses, "references": prompts})
    np.testing.assert_allclose(reward["rewards"], expected, atol=1e-6)
    np.testing.assert_allclose(scored["scores"], expected, atol=1e-6)
    assert missing.status_code == 400 and "sources are required" in missing.json()["error"]
