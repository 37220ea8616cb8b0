"""Client mistakes in the RL endpoints' fields are 400s naming the field, on a real server.

* A blank or null label (slime's ``label``, NeMo Gym's ``expected_answer``, ROLL's
  ``reward_info.ground_truth``, OpenRLHF's ``labels[i]``) is refused: scored, it would hand the
  trainer a reward of 0 against no reference.
* NaN, Infinity and lone surrogates are not JSON; Python's parser takes them, so a field that
  holds one is refused when the body is read, before NeMo Gym's ``/verify`` scores the row and
  fails to echo it.
* A Responses message whose ``content`` is not a list of parts (NeMo Gym) is refused, naming it.
"""

from __future__ import annotations

import pytest
from servers import serving

httpx = pytest.importorskip("httpx")

BLANKS = [
    ("", "is blank"),
    ("   ", "is blank"),
    ([""], "[0] is blank"),
    (None, "must be a string or a non-empty list of strings, got NoneType"),
]
POLICY = {
    "id": "r",
    "object": "response",
    "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is cold."}]}],
}
ROW = {
    "responses_create_params": {"input": [{"role": "user", "content": "Weather?"}]},
    "expected_answer": "It is cold.",
    "response": POLICY,
}


@pytest.fixture(scope="module")
def server():
    yield from serving("chrf")


def _refused(answer, *words):
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]
    assert all(word in message for word in words), message


@pytest.mark.parametrize("label, says", BLANKS)
def test_blank_labels_are_refused_by_every_rl_endpoint(server, label, says):
    _refused(
        server.post("/v1/reward", json={"prompt": "p", "response": "r", "label": label}),
        f"label{says}" if says.startswith("[") else f"label {says}",
    )
    group = [{"prompt": "p", "response": "r", "label": "ok"}, {"prompt": "p", "response": "r", "label": label}]
    _refused(server.post("/v1/reward", json=group), "[1].label")
    _refused(server.post("/verify", json={**ROW, "expected_answer": label}), "expected_answer", says)
    roll = {"prompt": "p", "response": "r", "reward_info": {"ground_truth": label}}
    _refused(server.post("/roll/submit_task", json=roll), "reward_info.ground_truth", says)
    _refused(
        server.post("/get_reward", json={"query": ["pa", "pb"], "prompts": ["p", "p"], "labels": ["ok", label]}),
        "labels[1]",
        says,
    )


def test_a_good_label_is_still_scored(server):
    assert (
        server.post("/v1/reward", json={"prompt": "p", "response": "It is cold.", "label": "It is cold."}).json()
        == 100.0
    )
    assert server.post("/verify", json=ROW).json()["reward"] == 100.0


def test_nemo_gym_content_that_is_not_parts(server):
    policy = {**POLICY, "output": [{"type": "message", "role": "assistant", "content": 5}]}
    _refused(
        server.post("/verify", json={**ROW, "response": policy}),
        "response.output[0].content must be a list of content parts, got int",
    )
    policy = {
        **POLICY,
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": 5}]}],
    }
    _refused(
        server.post("/verify", json={**ROW, "response": policy}),
        "response.output[0].content[0].text must be a string, got int",
    )


@pytest.mark.parametrize(
    "raw, says",
    [
        (b"NaN", "task.score is NaN"),
        (b"Infinity", "task.score is Infinity"),
        (b"-Infinity", "task.score is -Infinity"),
        (b'"\\ud800"', "task.score holds a lone UTF-16 surrogate"),
        (b'["ok", "x\\udfff"]', "task.score[1] holds a lone UTF-16 surrogate"),
    ],
)
def test_values_that_are_not_json_are_refused_naming_the_field(server, raw, says):
    import json

    body = json.dumps({**ROW, "task": {"score": "@"}}).encode().replace(b'"@"', raw)
    _refused(server.post("/verify", content=body, headers={"content-type": "application/json"}), says)
    score = json.dumps({"predictions": ["a"], "references": ["@"]}).encode().replace(b'"@"', raw)
    _refused(
        server.post("/v1/score", content=score, headers={"content-type": "application/json"}),
        says.replace("task.score", "references[0]"),
    )
    # a valid surrogate pair is text, not a lone surrogate
    pair = json.dumps({**ROW, "task": "\U0001f600"}).encode()
    assert (
        server.post("/verify", content=pair, headers={"content-type": "application/json"}).json()["task"]
        == "\U0001f600"
    )
