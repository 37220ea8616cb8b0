"""Every RL framework's reward protocol against a real ``nlgscore serve`` on a loopback port.

Rewards must equal offline ``compute`` on the same items (atol 1e-6: a batch's composition moves
the last bits of MiniLM's outputs, measured within 4e-7, as in tests/serve/test_serve.py). Where the
framework's own code installs beside this package it is used (SkyRL: ``skyrl_gym``'s
``BaseTextEnv``); otherwise each test sends the payload the framework's source shows and says
which file:

* slime: ``slime/rollout/rm_hub/__init__.py`` (``remote_rm``: ``{"prompt", "response", "label"}``,
  ``resp.json()`` is the reward; ``batched_async_rm`` calls a ``--custom-rm-path`` function with
  the group). slime does not install (Megatron, SGLang).
* NeMo Gym: ``nemo_gym/base_resources_server.py`` (``BaseVerifyRequest``: ``responses_create_params``
  and ``response``; ``BaseVerifyResponse`` adds ``reward``) and
  ``responses_api_agents/simple_agent/app.py`` (``/seed_session`` then ``/verify``). nemo-gym
  needs Python >= 3.12.
* NeMo-RL: ``nemo_rl/environments/interfaces.py`` and ``math_environment.py`` (``step(message_log_batch,
  metadata)`` on a Ray actor, ``metadata[i]["ground_truth"]``). nemo-rl needs CUDA wheels.
* ROLL: ``roll/pipeline/rlvr/rewards/remote_reward_system_worker.py`` (``submit_task`` then
  polling ``get_task_result``: a GET with a JSON body, ``errcode`` 0 done / 1 running).
* verifiers: ``docs/source/rubrics.md`` (a reward function takes ``prompt``, ``completion``,
  ``answer`` ... by name); verifiers 0.4 on PyPI has replaced ``Rubric``.
"""

from __future__ import annotations

import asyncio
import time
import types

import numpy as np
import pytest
from servers import ServeProcess

import nlgscore

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"
PROMPTS = ["What is the weather?", "Where is the cat?", "Who won?", "What fell?"]
RESPONSES = ["It is cold today.", "The cat is on the mat.", "The blue team won.", "Stocks fell sharply."]
LABELS = ["It is freezing.", ["A cat sits on the mat.", "On the mat."], "Blue won the game.", "Shares dropped."]


@pytest.fixture(scope="module")
def local():
    return nlgscore.load(SPEC)


@pytest.fixture(scope="module")
def expected(local):
    return local.compute(RESPONSES, LABELS).scores


@pytest.fixture(scope="module")
def server():
    with ServeProcess(SPEC, "--max-batch", "16", "--max-wait-ms", "20") as proc:
        proc.wait_ready()
        yield proc
        assert proc.terminate() == 0, proc.output()


def test_slime_remote_rm_one_sample_and_a_group(server, expected):
    from nlgscore.integrations.slime import group_rm

    url = server.url + "/v1/reward"

    async def one_by_one():  # slime's remote_rm: one POST per sample, many at once, `await resp.json()` is the reward
        async with httpx.AsyncClient(timeout=60) as client:
            answers = await asyncio.gather(
                *(
                    client.post(url, json={"prompt": p, "response": r, "label": lab})
                    for p, r, lab in zip(PROMPTS, RESPONSES, LABELS)
                )
            )
        return [a.json() for a in answers]

    singles = asyncio.run(one_by_one())
    assert all(isinstance(v, float) for v in singles)  # a bare JSON number
    np.testing.assert_allclose(singles, expected, rtol=0, atol=1e-6)
    chat = [
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": p}] for p in PROMPTS
    ]  # a chat-template prompt
    samples = [types.SimpleNamespace(prompt=p, response=r, label=lab) for p, r, lab in zip(chat, RESPONSES, LABELS)]
    group = asyncio.run(group_rm(types.SimpleNamespace(rm_url=url), samples))  # --group-rm --custom-rm-path
    np.testing.assert_allclose(group, expected, rtol=0, atol=1e-6)
    bad = server.post("/v1/reward", json={"prompt": "p", "response": "r", "label": None})
    assert bad.status_code == 400 and "label must be a string or a non-empty list" in bad.json()["error"]


def test_nemo_gym_seed_session_and_verify(server, expected):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        rewards = []
        for prompt, response, label in zip(PROMPTS, RESPONSES, LABELS):
            row = {
                "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
                "expected_answer": label,
                "task_id": "t1",
            }
            assert client.post("/seed_session", json=row).json() == {}
            policy = {
                "id": "resp_1",
                "object": "response",
                "output": [
                    {"type": "reasoning", "summary": []},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": response, "annotations": []}],
                    },
                ],
            }
            answer = client.post("/verify", json={**row, "response": policy}).json()
            assert answer["task_id"] == "t1" and answer["response"] == policy  # the request, echoed, with the reward
            rewards.append(answer["reward"])
        missing = client.post("/verify", json={"responses_create_params": {"input": "hi"}, "response": policy})
    np.testing.assert_allclose(rewards, expected, rtol=0, atol=1e-6)
    assert missing.status_code == 400 and "expected_answer is required" in missing.json()["error"]


def test_nemo_rl_environment_batches_through_the_server(server, expected):
    from nlgscore.integrations.nemo_rl import NlgscoreEnvironment

    env = NlgscoreEnvironment({"url": server.url})
    logs = [[{"role": "user", "content": p}, {"role": "assistant", "content": r}] for p, r in zip(PROMPTS, RESPONSES)]
    before = _scored(server)
    out = env.step(logs, [{"ground_truth": lab} for lab in LABELS])
    np.testing.assert_allclose(out.rewards.numpy(), expected, rtol=0, atol=1e-6)
    assert out.terminateds.tolist() == [1.0] * 4 and out.next_stop_strings == [None] * 4
    assert _scored(server) - before == len(PROMPTS)  # one batch, every sample scored once


def test_roll_submit_then_poll(server, expected):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        ids = []
        for k, (prompt, response, label) in enumerate(zip(PROMPTS, RESPONSES, LABELS)):
            payload = {
                "priority": 1,
                "project_id": "p",
                "experiment_id": "e",
                "global_step": 0,
                "data_id": str(k),
                "rollout_id": "r",
                "prompt": prompt,
                "response": response,
                "reward_info": {"ground_truth": label},
                "reward_manager": [],
                "timeout": 300,
            }
            answer = client.post("/roll/submit_task", json=payload).json()
            assert answer["errcode"] == 0
            ids.append(answer["reward_request_id"])
        scores = []
        for key in ids:
            deadline = time.monotonic() + 60
            while True:
                answer = client.request("GET", "/roll/task_result", json={"reward_request_id": key}).json()
                if answer["errcode"] != 1 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert answer["errcode"] == 0, answer
            scores.append(answer["reward_score"])
        gone = client.request("GET", "/roll/task_result", json={"reward_request_id": ids[0]})
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-6)
    assert gone.status_code == 404  # a result is read once


def test_skyrl_text_env_with_skyrl_gyms_base_class(server, expected):
    base = pytest.importorskip("skyrl_gym.envs.base_text_env")
    from nlgscore.integrations.skyrl import NlgscoreTextEnv

    rewards = []
    for prompt, response, label in zip(PROMPTS, RESPONSES, LABELS):
        env = NlgscoreTextEnv({"url": server.url}, {"reward_spec": {"method": "rule", "ground_truth": label}})
        assert isinstance(env, base.BaseTextEnv)
        env.init([{"role": "user", "content": prompt}])
        out = env.step(response)
        assert out["done"] is True and out["observations"] == []
        rewards.append(out["reward"])
    np.testing.assert_allclose(rewards, expected, rtol=0, atol=1e-6)


def test_verifiers_reward_function_called_as_a_rubric_calls_it(server, expected):
    from nlgscore.integrations.verifiers import reward_function

    reward = reward_function(url=server.url)

    async def rubric():  # verifiers passes the keywords the function takes, awaiting coroutines, concurrently
        return await asyncio.gather(
            *(
                reward(
                    prompt=[{"role": "user", "content": p}],
                    completion=[{"role": "assistant", "content": r}],
                    answer=lab,
                    state={},
                    task="default",
                    info={},
                )
                for p, r, lab in zip(PROMPTS, RESPONSES, LABELS)
            )
        )

    np.testing.assert_allclose(asyncio.run(rubric()), expected, rtol=0, atol=1e-6)
    assert reward.__name__ == "bertscore"


def _scored(server) -> float:
    import re

    return float(re.search(r"^nlgscore_predictions_total (\S+)$", server.get("/metrics").text, re.M).group(1))
