"""A fuzzed server: generated bodies, valid and malformed, sent at once to a real ``nlgscore serve
--workers 2`` and to a one-process server on 127.0.0.1, over every endpoint.

Invariants, for every request of every example:

* nothing answers 5xx, and nothing waits for a timeout (the client's timeout is well under the
  servers' ``--timeout``: a request lost in a frame would run into it);
* both server modes give the same status and the same body;
* a malformed request (a value no JSON body may hold, a wrong type, a missing field) gets a 4xx
  whose error names the cause, and costs no other request its answer;
* a valid ``/v1/score`` request gets the offline bits.

The examples are bounded for ``make test`` (``NLGSCORE_FUZZ_EXAMPLES``, default 40, sets how
many; a longer profile is ``NLGSCORE_FUZZ_EXAMPLES=2000``). The probe at the end sends 400 good
requests with malformed ones among them to the ``--workers`` server, as a load test of the same.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from servers import serving

import nlgscore

hypothesis = pytest.importorskip("hypothesis")
httpx = pytest.importorskip("httpx")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SPEC = "chrf"
TIMEOUT = 30  # the servers' --timeout; the client waits at most CLIENT_TIMEOUT
CLIENT_TIMEOUT = 15
FLAGS = ("--timeout", str(TIMEOUT), "--max-items", "64", "--threads", "1", "--drain-timeout", "2")
EXAMPLES = int(os.environ.get("NLGSCORE_FUZZ_EXAMPLES", "40"))


@pytest.fixture(scope="module")
def one():
    yield from serving(SPEC, *FLAGS)


@pytest.fixture(scope="module")
def workers():
    yield from serving(SPEC, "--workers", "2", *FLAGS)


# -- bodies ------------------------------------------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
TEXTS = st.lists(TEXT, min_size=1, max_size=4)


@st.composite
def valid(draw):
    """A request any server answers 200: (method, path, body as a JSON-able value)."""
    kind = draw(st.sampled_from(["score", "score_context", "matrix", "get_reward", "reward", "roll", "verify"]))
    preds = draw(TEXTS)
    refs = draw(st.lists(TEXT, min_size=len(preds), max_size=len(preds)))
    if kind == "score":
        return "/v1/score", {"predictions": preds, "references": refs}
    if kind == "score_context":
        doc_ids = draw(st.lists(st.integers(0, 2), min_size=len(preds), max_size=len(preds)).map(sorted))
        return "/v1/score", {"predictions": preds, "references": refs, "context": 0, "doc_ids": doc_ids}
    if kind == "matrix":
        return "/v1/matrix", {"predictions": preds, "references": refs}
    if kind == "get_reward":
        return "/get_reward", {"query": [f"Q: {p}" for p in preds], "prompts": ["Q: "] * len(preds), "labels": refs}
    if kind == "reward":
        return "/v1/reward", {"prompt": "Q", "response": preds[0], "label": refs[0]}
    if kind == "roll":
        return "/roll/submit_task", {"prompt": "Q", "response": preds[0], "reward_info": {"ground_truth": refs[0]}}
    policy = {
        "id": "r",
        "object": "response",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": preds[0]}]}],
    }
    row = {"responses_create_params": {"input": [{"role": "user", "content": "Q"}]}, "expected_answer": refs[0]}
    return "/verify", {**row, "response": policy}


# Values no body may hold, as JSON text: each mutation below puts one where a string or number was.
NOT_JSON = ["NaN", "Infinity", "-Infinity", "1e999", "-1e400", str(2**64), str(-(2**63) - 1)]
SURROGATES = ['"\\ud800"', '"a\\udfffb"', b'"\xed\xa0\x80"', b'"x\xed\xbf\xbfy"']


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaf_paths(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _leaf_paths(child, (*path, i))
    else:
        yield path


def _replaced(value, path, marker):
    if not path:
        return marker
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, marker)}
    return [_replaced(v, rest, marker) if i == head else v for i, v in enumerate(value)]


MARK = "\x00MARK\x00"


@st.composite
def malformed(draw):
    """A request no server may answer 2xx: (path, raw body bytes, what the error must mention)."""
    path, body = draw(valid())
    kind = draw(st.sampled_from(["not_json", "surrogate", "wrong_type", "missing", "deep", "too_many"]))
    leaves = list(_leaf_paths(body))
    if kind in ("not_json", "surrogate"):
        leaf = draw(st.sampled_from(leaves))
        spelled = draw(st.sampled_from(NOT_JSON if kind == "not_json" else SURROGATES))
        text = json.dumps(_replaced(body, leaf, MARK)).encode()
        spelled = spelled if isinstance(spelled, bytes) else spelled.encode()
        return path, text.replace(json.dumps(MARK).encode(), spelled), None
    if kind == "wrong_type":
        top = draw(st.sampled_from(sorted(k for k in body if k not in ("context", "doc_ids"))))
        bad = draw(st.sampled_from([7, {"a": 1}, [7], True]))
        return path, json.dumps({**body, top: bad}).encode(), None
    if kind == "missing":
        top = draw(st.sampled_from(sorted(body)))
        if top in ("context", "doc_ids", "labels", "references", "response", "responses_create_params"):
            top = next(iter(body))  # a field every endpoint needs: its first
        return path, json.dumps({k: v for k, v in body.items() if k != top}).encode(), None
    if kind == "deep":
        return path, b"[" * 20000 + b"]" * 20000, "nested too deeply"
    return "/v1/score", json.dumps({"predictions": ["a"] * 65, "references": ["b"] * 65}).encode(), "at most 64"


# -- sending -----------------------------------------------------------------------------------
async def _send_all(url, requests):
    async with httpx.AsyncClient(base_url=url, timeout=CLIENT_TIMEOUT) as client:
        calls = [
            client.post(path, content=body, headers={"content-type": "application/json"}) for path, body in requests
        ]
        return await asyncio.gather(*calls)


def _send(url, requests):
    return asyncio.run(_send_all(url, requests))


def _body(answer):
    try:
        return answer.json()
    except ValueError:
        return answer.text


def _comparable(path, body):
    if path == "/roll/submit_task" and isinstance(body, dict):  # a task id is the server's own
        return {k: v for k, v in body.items() if k != "reward_request_id"}
    return body


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(valid().map(lambda r: ("valid", r)), malformed().map(lambda r: ("bad", r))), min_size=1, max_size=8
    )
)
def test_fuzzed_bodies_get_the_same_answers_in_both_modes_and_cost_no_one_else(one, workers, mixed):
    requests = []
    for kind, request in mixed:
        if kind == "valid":
            path, body = request
            requests.append((path, json.dumps(body).encode()))
        else:
            requests.append((request[0], request[1]))
    started = time.monotonic()
    answers = {name: _send(server.url, requests) for name, server in (("one", one), ("workers", workers))}
    assert time.monotonic() - started < 2 * CLIENT_TIMEOUT  # nothing waited for a timeout
    scorer = nlgscore.load(SPEC)
    for i, ((kind, request), (path, raw)) in enumerate(zip(mixed, requests)):
        a, b = answers["one"][i], answers["workers"][i]
        assert a.status_code < 500 and b.status_code < 500, (path, raw[:200], a.text, b.text)
        assert a.status_code == b.status_code, (path, raw[:200], a.text, b.text)
        assert _comparable(path, _body(a)) == _comparable(path, _body(b)), (path, raw[:200])
        if kind == "bad":
            assert 400 <= a.status_code < 500 and a.json()["error"], (path, raw[:200], a.text)
            if request[2] is not None:
                assert request[2] in a.json()["error"], a.json()
        elif a.status_code == 200 and path == "/v1/score":
            body = json.loads(raw)
            context = {k: body[k] for k in ("context", "doc_ids") if k in body}
            assert a.json()["scores"] == scorer.compute(body["predictions"], body["references"], **context).scores


def test_values_no_body_may_hold_are_named_in_both_modes(one, workers):
    """The one JSON reading rule: each spelling, in a field every endpoint reads, is a 400 naming
    the field, the same in both modes."""
    for spelled, says in [
        (b"NaN", "is NaN"),
        (b"Infinity", "is Infinity"),
        (b"1e999", "overflows a float"),
        (b"-1e400", "overflows a float"),
        (str(2**64).encode(), "integer beyond 64 bits"),
        (b'"\\ud800"', "lone UTF-16 surrogate"),
        (b'"\xed\xa0\x80"', "lone UTF-16 surrogate"),
    ]:
        raw = b'{"predictions": ["a"], "references": ["b"], "context": ' + spelled + b"}"
        if b'"' in spelled:
            raw = b'{"predictions": [' + spelled + b'], "references": ["b"]}'
        for server in (one, workers):
            answer = server.post("/v1/score", content=raw, headers={"content-type": "application/json"})
            assert answer.status_code == 400, answer.text
            field = "predictions[0]" if b'"' in spelled else "context"
            assert answer.json()["error"].startswith(field) and says in answer.json()["error"], answer.json()


def test_nemo_gym_verify_refuses_what_it_could_not_echo(one, workers):
    row = b'{"responses_create_params": {"input": [{"role": "user", "content": "Q"}]}, "expected_answer": "a", '
    policy = b'"response": {"id": "r", "object": "response", "output": [{"type": "message", "role": "assistant", '
    for extra in (b'"temperature": 1e999', b'"temperature": -1e400', b'"metadata": "\xed\xa0\x80"'):
        raw = row + policy + b'"content": [{"type": "output_text", "text": "a"}]}]}, ' + extra + b"}"
        for server in (one, workers):
            answer = server.post("/verify", content=raw, headers={"content-type": "application/json"})
            assert answer.status_code == 400, answer.text


def test_four_hundred_good_requests_with_malformed_ones_among_them(workers):
    """The probe's load: 400 concurrent good requests and 60 malformed ones (each kind of value no
    body may hold) to the --workers server: every good one gets its offline bits, well within the
    servers' --timeout, every bad one its 400."""
    scorer = nlgscore.load(SPEC)
    good = [(f"the cat number {i} sat", f"a cat {i % 7} sat on the mat") for i in range(400)]
    bad = [b"NaN", b"1e999", str(2**64).encode(), b'"\\ud800"', b'"\xed\xa0\x80"', b"-1e400"] * 10
    requests = [("/v1/score", json.dumps({"predictions": [p], "references": [r]}).encode()) for p, r in good]
    for i, spelled in enumerate(bad):
        field = b'"context": ' + spelled if b'"' not in spelled else b'"doc_ids": [' + spelled + b"]"
        requests.insert(7 * i, ("/v1/score", b'{"predictions": ["a"], "references": ["b"], ' + field + b"}"))
    started = time.monotonic()
    answers = _send(workers.url, requests)
    took = time.monotonic() - started
    assert took < TIMEOUT, took  # no request waited for the servers' timeout
    good_answers = [a for (_, raw), a in zip(requests, answers) if raw.startswith(b'{"predictions": ["the cat')]
    assert [a.status_code for a in good_answers] == [200] * len(good)
    assert [a.json()["scores"][0] for a in good_answers] == scorer.compute(
        [p for p, _ in good], [r for _, r in good]
    ).scores
    assert sum(a.status_code == 400 for a in answers) == len(bad)
