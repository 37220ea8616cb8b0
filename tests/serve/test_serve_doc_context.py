"""Document context over HTTP: ``/v1/score`` takes optional ``context`` and ``doc_ids`` fields,
and a RemoteScorer's ``compute(..., context=k, doc_ids=...)`` sends them (a real server on a
loopback port)."""

from __future__ import annotations

import pytest
from servers import ServeProcess

import nlgscore

httpx = pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"
PREDS = ["The cat sat on a mat.", "It was glad.", "Then it slept.", "Stocks went down.", "The markets fell."]
REFS = ["A cat sat on the mat.", "It was happy.", "Then it went to sleep.", "Stocks fell.", "Markets dropped."]
DOCS = ["a", "a", "a", "b", "b"]


@pytest.fixture(scope="module")
def server():
    with ServeProcess(SPEC, "--max-wait-ms", "5") as proc:
        proc.wait_ready()
        yield proc
        assert proc.terminate() == 0, proc.output()


def test_context_over_http_gives_the_local_bits(server):
    local = nlgscore.load(SPEC).compute(PREDS, REFS, context=2, doc_ids=DOCS)
    remote = nlgscore.load(server.url).compute(PREDS, REFS, context=2, doc_ids=DOCS)
    assert (
        remote.scores == local.scores
        and str(remote.signature) == str(local.signature)
        and "|ctx:2|" in str(local.signature)
    )
    raw = server.post(
        "/v1/score", json={"predictions": PREDS, "references": REFS, "context": 2, "doc_ids": DOCS}
    ).json()
    assert raw["scores"] == local.scores
    plain = server.post("/v1/score", json={"predictions": PREDS, "references": REFS}).json()
    assert plain["scores"] == nlgscore.load(SPEC).compute(PREDS, REFS).scores and "ctx:" not in plain["signature"]


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"context": 2}, "context=2 needs doc_ids"),
        ({"context": "2", "doc_ids": DOCS}, "context must be an int"),
        ({"context": 1, "doc_ids": DOCS[:2]}, "doc_ids has 2 items but there are 5 predictions"),
        ({"context": 1, "doc_ids": "abc"}, "doc_ids must be a JSON array"),
    ],
)
def test_bad_context_fields_are_400_naming_them(server, extra, message):
    answer = server.post("/v1/score", json={"predictions": PREDS, "references": REFS, **extra})
    assert answer.status_code == 400 and message in answer.json()["error"]
