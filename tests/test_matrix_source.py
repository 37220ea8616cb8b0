"""Utility matrices of a metric that scores with references *and* sources, and MBR
over them: ``matrix(P, R, source=S)`` equals ``compute`` over every pair with that source, and
``mbr.decode`` equals brute force.

The reference+source metric is defined here on the embedded MiniLM (a COMET-like blend of the
candidate's BERTScore F1 against the reference and against the source); one variant has the
template's default matrix path, the other a fast path (``_matrix_columns``) that must receive
the call's source. Nothing is mocked.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from ties import assert_canonical_best

from nlgscore.core.base import Scorer
from nlgscore.core.result import Result
from nlgscore.errors import ArgumentError
from nlgscore.mbr import MBRItem, decode

P = [
    "The cat sat on the mat.",
    "A dog barked loudly all night long.",
    "The cat sat on the mat.",
    "Stocks fell on Monday.",
    "Rain.",
]
R = [
    "A cat was sitting on the mat.",
    "Markets dropped sharply on Monday morning.",
    "The dog was loud.",
    "A cat was sitting on the mat.",
]
SOURCES = ["Die Katze saß auf der Matte.", "Die Börse fiel am Montag."]


class RefSource(Scorer):
    """0.7 x F1(prediction, reference) + 0.3 x F1(prediction, source), BERTScore on MiniLM."""

    name = "refsource"
    needs = ("references", "sources")
    multiref = "max"

    def __init__(self, bert) -> None:
        super().__init__()
        self.bert = bert

    def _score_items(self, items, state):
        preds = [item.prediction for item in items]
        ref = np.asarray(self.bert.compute(preds, [item.reference for item in items]).scores) if items else np.zeros(0)
        src = np.asarray(self.bert.compute(preds, [item.source for item in items]).scores) if items else np.zeros(0)
        return {"score": 0.7 * ref + 0.3 * src, "ref_f1": ref}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "score")

    def _signature_fields(self, call):
        return {"blend": "0.7/0.3"}


class FastRefSource(RefSource):
    """The same metric with a matrix fast path: two BERTScore matrices instead of every pair."""

    pairs_from_embeddings = True
    fast_calls = 0

    def _matrix_columns(self, predictions, references, call_options, source=None):
        assert source is not None  # the template hands the call's source to the hook
        type(self).fast_calls += 1
        ref = self.bert.matrix(predictions, references)
        src = self.bert.matrix(predictions, [source])
        return {"score": 0.7 * ref + 0.3 * src, "ref_f1": ref}, "score"


@pytest.fixture(scope="module", params=["template", "fast"])
def refsource(request, minilm_scorer):
    return (RefSource if request.param == "template" else FastRefSource)(minilm_scorer)


def all_pairs(scorer, source, column=None):
    """compute() over every (prediction, reference) pair with ``source``, shuffled, as a matrix."""
    cells = [(i, j) for i in range(len(P)) for j in range(len(R))]
    random.Random(0).shuffle(cells)
    result = scorer.compute([P[i] for i, _ in cells], [R[j] for _, j in cells], [source] * len(cells))
    values = result.columns()[column or result.primary]
    out = np.zeros((len(P), len(R)))
    for (i, j), value in zip(cells, values):
        out[i, j] = value
    return out


def test_matrix_with_a_source_equals_compute_over_every_pair(refsource):
    fast_before = FastRefSource.fast_calls
    for source in SOURCES:
        got = refsource.matrix(P, R, source=source)
        assert got.shape == (len(P), len(R)) and got.dtype == np.float64
        np.testing.assert_allclose(got, all_pairs(refsource, source), atol=1e-6, rtol=0)
        np.testing.assert_allclose(
            refsource.matrix(P, R, source=source, column="ref_f1"),
            all_pairs(refsource, source, "ref_f1"),
            atol=1e-6,
            rtol=0,
        )
    # the source changes the numbers (it is really used), the reference-only column does not
    assert not np.allclose(refsource.matrix(P, R, source=SOURCES[0]), refsource.matrix(P, R, source=SOURCES[1]))
    assert (FastRefSource.fast_calls > fast_before) == isinstance(refsource, FastRefSource)


def brute_force(scorer, item):
    """The mean over the item's (candidate, sample) pairs of compute with the item's source (the
    pairs shuffled into one call; each row summed exactly, so its order does not round it)."""
    samples = item.samples
    cells = [(i, j) for i in range(item.n) for j in range(len(samples)) if not (item.excludes_self and i == j)]
    random.Random(1).shuffle(cells)
    scores = scorer.compute(
        [item.candidates[i] for i, _ in cells], [samples[j] for _, j in cells], [item.source] * len(cells)
    ).scores
    rows = [[] for _ in range(item.n)]
    for (i, _), value in zip(cells, scores):
        rows[i].append(value)
    return np.array([math.fsum(row) / len(row) for row in rows])


@pytest.mark.parametrize("variant", [RefSource, FastRefSource], ids=["template", "fast"])
def test_mbr_decode_passes_each_items_source(variant, kernel):
    refsource = variant(kernel.scorer("minilm"))
    items = [
        MBRItem(P, source=SOURCES[0], id="a"),
        MBRItem(P[::-1], source=SOURCES[1], id="b"),
        MBRItem(P[:3], R, source=SOURCES[1], id="c"),
        MBRItem(R, source=SOURCES[1], id="d"),
    ]
    choices = decode(refsource, items, keep_matrices=True)
    for item, choice in zip(items, choices):
        want = brute_force(refsource, item)
        # 1e-6: matrix (one call over the distinct pairs; the fast variant from embeddings) and a
        # shuffled compute are two batchings, 2.4e-7 apart at most in float32 on the AMD Zen 4 and
        # Intel Xeon (AMX) CPUs, either kernel.
        np.testing.assert_allclose(choice.expected_utility, want, atol=1e-6, rtol=0)
        # P holds a duplicate (0 and 2): the same pairs, so the same bits on any kernel; the lowest index wins
        twins = [(i, j) for i in range(item.n) for j in range(i) if item.candidates[i] == item.candidates[j]]
        assert all(choice.expected_utility[i] == choice.expected_utility[j] for i, j in twins)
        assert_canonical_best(choice.best_index, choice.expected_utility, want, tol=1e-6)
        assert choice.matrix.shape == (item.n, len(item.samples))
        # the same item alone, and its matrix straight from matrix(source=)
        np.testing.assert_allclose(
            choice.matrix, refsource.matrix(item.candidates, item.samples, source=item.source), atol=1e-6, rtol=0
        )
    with pytest.raises(ArgumentError, match="item 'x' has no source"):
        decode(refsource, [MBRItem(P, source=SOURCES[0], id="ok"), MBRItem(P, id="x")])


def test_source_is_refused_where_it_cannot_be_used(minilm_scorer, prism):
    refsource = RefSource(minilm_scorer)
    with pytest.raises(ArgumentError, match=r"^source is required"):
        refsource.matrix(P, R)
    with pytest.raises(TypeError, match=r"^source must be a str"):
        refsource.matrix(P, R, source=["a"])
    with pytest.raises(ArgumentError, match=r"^source must be None: this bertscore call scores with references only"):
        minilm_scorer.matrix(P, R, source=SOURCES[0])
    with pytest.raises(ArgumentError, match=r"^source must be None"):
        prism.matrix(P, R, source=SOURCES[0])  # Prism-ref (no mode given: references decide)
    with pytest.raises(ArgumentError, match="scores with sources only"):
        prism.matrix(P, R, mode="src")
    # decode keeps sources away from a metric that does not score with them
    [choice] = decode(minilm_scorer, [MBRItem(P, source=SOURCES[0])])
    [plain] = decode(minilm_scorer, [MBRItem(P)])
    assert np.array_equal(choice.expected_utility, plain.expected_utility)
