"""RemoteScorer checks what a server answers, and is a ScorerLike, not a Scorer.

The server is a real HTTP server on a loopback port (the standard library's) that answers
whatever the test sets: a proxy or a broken server, as the client would meet it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("httpx")

from nlgscore.core.base import Scorer
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.remote.client import RemoteScorer, ServerError

HEALTH = {
    "status": "ok",
    "metric": "toy",
    "signature": "nlgscore:toy|multiref:max",
    "needs": ["references"],
    "matrix": True,
}


@pytest.fixture(scope="module")
def server():
    answers = {"/health": HEALTH}

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            body = json.dumps(answers[self.path]).encode()  # NaN is written as NaN, as Python servers do
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", answers
    httpd.shutdown()


def scored(values):
    return {"scores": values, "columns": {"f1": values}, "primary": "f1", "signature": HEALTH["signature"]}


def test_a_remote_scorer_is_scorer_like_without_subclassing(server):
    remote = RemoteScorer(server[0], retries=0)
    assert isinstance(remote, ScorerLike) and not isinstance(remote, Scorer)


@pytest.mark.parametrize(
    "values, error, message",
    [
        ([0.5, 0.5], ServerError, "2 scores .* for 3 predictions"),
        ([0.5] * 4, ServerError, "4 scores .* for 3 predictions"),
        ([0.5, float("nan"), 0.5], NonFiniteScoreError, "not finite for predictions \\[1\\]"),
    ],
)
def test_a_wrong_answer_is_refused_naming_the_mismatch(server, values, error, message):
    url, answers = server
    answers["/v1/score"] = scored(values)
    with pytest.raises(error, match=message):
        RemoteScorer(url, retries=0).compute(["a", "b", "c"], ["x", "y", "z"])
    answers["/v1/score"] = scored([0.5, 0.25, 1.0])
    assert RemoteScorer(url, retries=0).compute(["a", "b", "c"], ["x", "y", "z"]).scores == [0.5, 0.25, 1.0]


@pytest.mark.parametrize(
    "grid, error, message",
    [
        ([[0.5, 0.5]], ServerError, r"shape \(1, 2\) for 2 predictions x 2 references"),
        ([0.5, 0.5, 0.5, 0.5], ServerError, r"shape \(4,\)"),
        ([[0.5, float("inf")], [0.5, 0.5]], NonFiniteScoreError, "not finite"),
    ],
)
def test_a_wrong_matrix_is_refused(server, grid, error, message):
    url, answers = server
    answers["/v1/matrix"] = {"matrix": grid, "column": None, "signature": HEALTH["signature"]}
    with pytest.raises(error, match=message):
        RemoteScorer(url, retries=0).matrix(["a", "b"], ["x", "y"])


def _answer(**fields):
    return {**scored([0.5, 0.25, 1.0]), **fields}


@pytest.mark.parametrize(
    "answer, message",
    [
        (_answer(columns=None), "columns is null"),
        (_answer(scores=None), "scores is null"),
        (_answer(columns=None, scores=None), "columns is null"),
        (_answer(columns={"f1": None}), "column 'f1' is null"),
        (_answer(columns={}), "columns is an empty object"),
        (_answer(columns=[0.5, 0.25, 1.0]), "columns is a list"),
        (_answer(columns={"f1": ["a", "b", "c"]}), "column 'f1' holds values that are not numbers"),
        (_answer(columns={"f1": [0.5, None, 1.0]}), "column 'f1' holds values that are not numbers"),
        (_answer(columns={"f1": [[0.5], [0.25, 1.0]]}), "column 'f1' is not a rectangular array"),
        (_answer(scores="0.5 0.25 1.0"), "scores is a str"),
        (_answer(signature=None), "signature is null"),
        (_answer(primary=3), "primary column 3"),
        (_answer(layer="top"), "layer is a str"),
        ({"scores": [0.5, 0.25, 1.0]}, "KeyError: 'columns'"),
    ],
)
def test_a_malformed_answer_is_a_server_error(server, answer, message):
    url, answers = server
    answers["/v1/score"] = answer
    remote = RemoteScorer(url, retries=0)
    try:
        with pytest.raises(ServerError, match=f"/v1/score answered a malformed result: .*{message}"):
            remote.compute(["a", "b", "c"], ["x", "y", "z"])
        with pytest.raises(ServerError, match="answered a malformed result"):
            asyncio.run(remote.acompute(["a", "b", "c"], ["x", "y", "z"]))
    finally:
        answers["/v1/score"] = scored([0.5, 0.25, 1.0])


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("timeout", 0, "timeout must be a finite number of seconds > 0, got 0"),
        ("timeout", 0.0, "timeout must be a finite number of seconds > 0"),
        ("timeout", -1, "timeout must be .* > 0, got -1"),
        ("timeout", "5", "timeout must be .* got '5'"),
        ("timeout", None, "timeout must be .* got None"),
        ("timeout", True, "timeout must be .* got True"),
        ("backoff", -0.5, "backoff must be a finite number of seconds >= 0"),
        ("backoff", "x", "backoff must be"),
        ("wait", -1, "wait must be a finite number of seconds >= 0"),
        ("wait", None, "wait must be"),
        ("retries", -1, "retries must be an integer >= 0, got -1"),
        ("retries", 1.5, "retries must be an integer"),
        ("retries", "3", "retries must be an integer"),
        ("retries", True, "retries must be an integer"),
        ("api_key", 123, "api_key must be a str"),
    ],
)
def test_a_nonsensical_constructor_argument_is_refused_at_once_naming_it(server, name, value, message):
    # wait=0 as well: were the argument let through, the health check would fail at once instead of
    # polling for two minutes, and the test would see that failure rather than a refusal.
    options = {"wait": 0, "retries": 0, name: value}
    started = time.monotonic()
    with pytest.raises(ArgumentError if name != "api_key" else ArgumentTypeError, match=message):
        RemoteScorer(server[0], **options)
    assert time.monotonic() - started < 1


def test_numpy_numbers_are_accepted_as_constructor_arguments(server):
    remote = RemoteScorer(server[0], timeout=np.float32(5), retries=np.int64(1), backoff=np.int64(0), wait=np.int8(1))
    assert (remote.timeout, remote.retries, remote.backoff) == (5.0, 1, 0.0) and type(remote.retries) is int


@pytest.mark.parametrize("name", ["wait", "timeout", "backoff"])
def test_waits_must_be_finite(server, name):
    with pytest.raises(ArgumentError, match=f"{name} must be a finite number"):
        RemoteScorer(server[0], **{name: float("nan")})
    with pytest.raises(ArgumentError, match=name):
        RemoteScorer(server[0], **{name: float("inf")})
