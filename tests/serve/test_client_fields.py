"""What a RemoteScorer sends: numpy integers in ``doc_ids`` and ``context`` travel as the Python
ints they are (a numpy array of ids too) and score as a local call does; a value JSON cannot carry
is refused before sending, naming its field (a real ``nlgscore serve`` on a loopback port)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from servers import serving

import nlgscore
from nlgscore.errors import ArgumentError, ArgumentTypeError

pytest.importorskip("httpx")

SPEC = "bertscore:minilm:L2"
PREDS = ["The cat sat on a mat.", "It was glad.", "Then it slept.", "Stocks went down.", "The markets fell."]
REFS = ["A cat sat on the mat.", "It was happy.", "Then it went to sleep.", "Stocks fell.", "Markets dropped."]
DOCS = [7, 7, 7, 8, 8]


@pytest.fixture(scope="module")
def server():
    yield from serving(SPEC, "--max-wait-ms", "5")


@pytest.fixture(scope="module")
def local():
    return nlgscore.load(SPEC).compute(PREDS, REFS, context=2, doc_ids=DOCS)


@pytest.mark.parametrize(
    "context, doc_ids",
    [
        (np.int64(2), [np.int64(d) for d in DOCS]),
        (2, np.array(DOCS, dtype=np.int64)),
        (np.int32(2), np.array(DOCS, dtype=np.int32)),
        (2, np.array([str(d) for d in DOCS])),
    ],
    ids=["int64-scalars", "int64-array", "int32-array", "str-array"],
)
def test_numpy_integers_in_doc_ids_and_context_score_as_ints(server, local, context, doc_ids):
    with nlgscore.load(server.url) as remote:
        result = remote.compute(PREDS, REFS, context=context, doc_ids=doc_ids)
        assert result.scores == local.scores and str(result.signature) == str(local.signature)
        later = asyncio.run(remote.acompute(PREDS, REFS, context=context, doc_ids=doc_ids))
        assert later.scores == local.scores


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"context": 2, "doc_ids": [7, 7, b"d", 8, 8]}, ArgumentTypeError, r"doc_ids\[2\] cannot be sent .* a bytes"),
        ({"context": 2, "doc_ids": [7, 7, 7, 8, object()]}, ArgumentTypeError, r"doc_ids\[4\] cannot be sent"),
        ({"context": 2, "doc_ids": {7, 8}}, ArgumentTypeError, "doc_ids cannot be sent .* a set"),
        ({"context": np.float64("nan"), "doc_ids": DOCS}, ArgumentError, "context cannot be sent .* JSON has no nan"),
        ({"context": 1j, "doc_ids": DOCS}, ArgumentTypeError, "context cannot be sent .* a complex"),
        ({"prompt": object()}, ArgumentTypeError, "prompt cannot be sent to the server"),
    ],
)
def test_an_unsendable_value_is_refused_naming_its_field(server, options, error, message):
    with nlgscore.load(server.url) as remote:
        with pytest.raises(error, match=message):
            remote.compute(PREDS, REFS, **options)
        with pytest.raises(error, match=message):
            asyncio.run(remote.acompute(PREDS, REFS, **options))
