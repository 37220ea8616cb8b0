"""RemoteScorer checks what a server answers, and is a ScorerLike, not a Scorer.

The server is a real HTTP server on a loopback port (the standard library's) that answers
whatever the test sets: a proxy or a broken server, as the client would meet it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")

from nlgscore.core.base import Scorer
from nlgscore.core.result import NonFiniteScoreError
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError
from nlgscore.serve.client import RemoteScorer, ServerError

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


@pytest.mark.parametrize("name", ["wait", "timeout", "backoff"])
def test_waits_must_be_finite(server, name):
    with pytest.raises(ArgumentError, match=f"{name} must be a finite number"):
        RemoteScorer(server[0], **{name: float("nan")})
    with pytest.raises(ArgumentError, match=name):
        RemoteScorer(server[0], **{name: float("inf")})
