"""verl's custom reward functions against a real ``nlgscore serve`` on a loopback port.

verl itself cannot be installed beside this package (verl 0.9.1 pins transformers<5.11), so the
functions are called exactly as verl 0.9.1 calls a custom reward function: ``reward_kwargs``
merged in by ``_call_with_kwargs`` (copied below), the ``naive`` manager's keyword call in a
thread pool (sync) or awaited (async) for many samples at once, and ``compute_score_batch`` for a whole batch.
The server and the scorers are real: rewards equal ``compute``, and the server scored every
prediction exactly once (its Prometheus counter), merging concurrent samples into batches.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("httpx", reason="the client is the 'serve' extra")

from servers import ServeProcess

from nlgscore.errors import ArgumentError
from nlgscore.integrations import verl
from nlgscore.registry import cached, load
from nlgscore.scheduler.microbatch import shared_batcher

SPEC = "bertscore:minilm:L2"
GOLDEN = Path(__file__).parents[1] / "golden"
N = 24
SOLUTIONS = [f"the {w} number {k} sat on the mat" for k, w in enumerate(["cat", "dog", "cow", "fox"] * (N // 4))]
TRUTHS = [
    f"a {w} was on a mat" if k % 3 else [f"a {w} sat", f"the {w} is on mat {k}"]
    for k, w in enumerate(["cat", "dog", "bird", "fox"] * (N // 4))
]
QUESTIONS = [f"where did the {w} sit?" for w in ["cat", "dog", "cow", "fox"] * (N // 4)]


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py (0.9.1)
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py (0.9.1)
    return await raw_fn(*args, **{**kwargs, **extra_kwargs})


def _extra(k, **more):
    # what verl's naive manager adds to each sample's extra_info
    return {"index": k, "question": QUESTIONS[k], "num_turns": None, "rollout_reward_scores": {}, **more}


@pytest.fixture(scope="module")
def server():
    with ServeProcess(SPEC, "--max-batch", "16", "--max-wait-ms", "30") as proc:
        proc.wait_ready()
        yield proc
        assert proc.terminate() == 0, proc.output()


@pytest.fixture(scope="module")
def expected():
    return load(SPEC).compute(SOLUTIONS, references=TRUTHS).scores


def _scored(server) -> float:
    return float(re.search(r"^nlgscore_predictions_total (\S+)$", server.get("/metrics").text, re.M).group(1))


def test_sync_async_and_batch_forms_against_a_server_equal_compute(server, expected, monkeypatch):
    before = _scored(server)
    # sync: the naive manager runs the plain function in its thread pool, many samples at once;
    # the server comes from reward_kwargs (url=), a ground truth may be a parquet list (numpy array)
    fn = functools.partial(_call_with_kwargs, verl.compute_score, {"url": server.url})
    truths = [np.array(t) if isinstance(t, list) else t for t in TRUTHS]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [
            pool.submit(fn, data_source="chat", solution_str=SOLUTIONS[k], ground_truth=truths[k], extra_info=_extra(k))
            for k in range(N)
        ]
        sync = [f.result() for f in futures]
    assert sync == pytest.approx(expected, abs=1e-6)

    # async: the reward loop awaits the coroutine function for every sample concurrently; the
    # server comes from the environment
    monkeypatch.setenv(verl.ENV_URL, server.url)
    afn = functools.partial(_call_with_kwargs_async, verl.compute_score_async, {})

    async def loop():
        return await asyncio.gather(
            *(
                afn(data_source="chat", solution_str=SOLUTIONS[k], ground_truth=TRUTHS[k], extra_info=_extra(k))
                for k in range(N)
            )
        )

    assert list(asyncio.run(loop())) == pytest.approx(expected, abs=1e-6)
    monkeypatch.delenv(verl.ENV_URL)

    # batch: the batch manager's one call; the server comes from each sample's extra_info
    batch = verl.compute_score_batch(
        data_sources=["chat"] * N,
        solution_strs=SOLUTIONS,
        ground_truths=TRUTHS,
        extra_infos=[_extra(k, nlgscore_url=server.url) for k in range(N)],
    )
    assert batch == pytest.approx(expected, abs=1e-6)

    assert _scored(server) - before == 3 * N  # every prediction scored once on the server: none lost, none twice
    text = server.get("/metrics").text
    calls = float(re.search(r"^nlgscore_batch_calls_sum (\S+)$", text, re.M).group(1))
    batches = float(re.search(r"^nlgscore_batch_calls_count (\S+)$", text, re.M).group(1))
    assert calls / batches > 1  # concurrent samples were merged into shared batches


def test_local_spec_and_a_source_based_metric_and_a_column():
    options = {"checkpoint": str(GOLDEN / "tiny-prism"), "lang": "en"}
    kwargs = {"spec": "prism:src", "options": options, "source_key": "question"}
    got = [verl.compute_score("chat", SOLUTIONS[k], None, _extra(k), **kwargs) for k in range(4)]
    assert got == pytest.approx(
        load("prism:src", **options).compute(SOLUTIONS[:4], sources=QUESTIONS[:4]).scores, abs=1e-5
    )

    async def loop():
        return await asyncio.gather(
            *(
                verl.compute_score_async("chat", SOLUTIONS[k], TRUTHS[k], {"nlgscore_spec": SPEC}, column="recall")
                for k in range(N)
            )
        )

    batcher = shared_batcher(cached(SPEC))  # the local scorer's micro-batcher, behind acompute
    before = batcher.batches
    recall = load(SPEC).compute(SOLUTIONS, references=TRUTHS).recall
    assert list(asyncio.run(loop())) == pytest.approx(recall, abs=1e-6)
    assert batcher.batches - before < N  # the concurrent samples were merged in-process


def test_bad_calls_name_what_is_missing(monkeypatch):
    monkeypatch.delenv(verl.ENV_URL, raising=False)
    monkeypatch.delenv(verl.ENV_SPEC, raising=False)
    with pytest.raises(ArgumentError, match="NLGSCORE_URL"):
        verl.compute_score("chat", "a", "b", {})
    with pytest.raises(ArgumentError, match="source_key"):
        verl.compute_score(
            "chat", "a", None, {}, spec="prism:src", options={"checkpoint": str(GOLDEN / "tiny-prism"), "lang": "en"}
        )
    with pytest.raises(ArgumentError, match="ground_truths has 1 items for 2"):
        verl.compute_score_batch(["chat"] * 2, ["a", "b"], ["c"], None, spec=SPEC)
    with pytest.raises(ArgumentError, match="column"):
        verl.compute_score("chat", "a", "b", None, spec=SPEC, column="nope")
    with pytest.raises(ArgumentError, match="url="):
        verl.compute_score("chat", "a", "b", None, spec="http://127.0.0.1:1")


def test_readme_routes_verl_through_a_manager_that_exists():
    # verl 0.9.1's reward loop registers naive, dapo, gdpo, limited and remote
    # (verl/experimental/reward_loop/reward_manager/*.py, @register); `batch` raises ValueError there
    readme = (Path(__file__).parents[2] / "docs" / "guides" / "rl-rewards.md").read_text(encoding="utf-8")
    for match in re.finditer(r"name=batch", readme):
        assert "raises" in readme[match.end() : match.end() + 30], readme[match.start() - 200 : match.end() + 60]
    assert "name=compute_score_async" in readme
