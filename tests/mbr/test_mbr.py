"""MBR selection and QE reranking on real models: the embedded MiniLM and the
tiny golden Prism/BART checkpoints. Encode counts wrap the real ``Encoder.embed``; nothing is mocked.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from ties import assert_canonical_best, lowest_best

from nlgscore.errors import ArgumentError, NlgscoreError
from nlgscore.mbr import MBRItem, best_index, decode, expected_utility

CANDS = [
    "The cat sat on the mat.",
    "A cat was sitting on the mat.",
    "The cat sat on the mat.",
    "Stocks fell on Monday.",
    "Rain.",
]
PSEUDO = ["A cat sat on a mat.", "Markets dropped on Monday.", "The cat sat on the mat."]


def brute_force(scorer, cands, samples, exclude_self, column=None):
    """The mean of compute over the same (candidate, sample) pairs, one shuffled compute call."""
    cells = [(i, j) for i in range(len(cands)) for j in range(len(samples)) if not (exclude_self and i == j)]
    random.Random(1).shuffle(cells)
    result = scorer.compute([cands[i] for i, _ in cells], [samples[j] for _, j in cells])
    values = result.columns()[column or result.primary]
    sums, counts = np.zeros(len(cands)), np.zeros(len(cands))
    for (i, _), value in zip(cells, values):
        sums[i] += value
        counts[i] += 1
    return sums / counts


@pytest.mark.parametrize("name", ["minilm_scorer", "prism", "bart"])
def test_expected_utility_is_the_mean_of_compute_over_the_same_pairs(name, request):
    scorer = request.getfixturevalue(name)
    own, given = decode(scorer, [MBRItem(CANDS, id="own"), MBRItem(CANDS, PSEUDO, id="given")], keep_matrices=True)
    np.testing.assert_allclose(own.expected_utility, brute_force(scorer, CANDS, CANDS, True), atol=1e-6, rtol=0)
    np.testing.assert_allclose(given.expected_utility, brute_force(scorer, CANDS, PSEUDO, False), atol=1e-6, rtol=0)
    assert own.matrix.shape == (5, 5) and given.matrix.shape == (5, 3)
    assert own.best_index == lowest_best(own.expected_utility) and own.best == CANDS[own.best_index]


def test_non_primary_column(minilm_scorer):
    [choice] = decode(minilm_scorer, [CANDS], column="precision")
    np.testing.assert_allclose(
        choice.expected_utility, brute_force(minilm_scorer, CANDS, CANDS, True, "precision"), atol=1e-6, rtol=0
    )
    with pytest.raises(ArgumentError, match="column"):
        decode(minilm_scorer, [CANDS], column="nope")


def test_each_distinct_text_is_encoded_once_per_call(monkeypatch):
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(model_type="minilm", num_layers=4)
    encoded = []
    real = scorer.encoder.embed

    def counting(batch, *args, **kwargs):  # a wrapper around the real encoder, not a mock
        encoded.extend(tuple(ids) for ids in batch)
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(scorer.encoder, "embed", counting)
    # 5 candidates (one repeated), pseudo-references overlapping them, and a second item made of
    # the same texts: the items share one matrix call, each of the 6 distinct texts encoded once
    decode(scorer, [MBRItem(CANDS, PSEUDO), MBRItem(CANDS[:3])])
    assert len(encoded) == len(set(CANDS) | set(PSEUDO)) == len(set(encoded))
    encoded.clear()
    decode(scorer, [MBRItem(CANDS, PSEUDO), MBRItem(PSEUDO)])
    assert len(encoded) == len(set(encoded))


def test_grouped_items_get_their_own_blocks(minilm_scorer):
    items = [MBRItem(CANDS, id=0), MBRItem(PSEUDO, id=1), MBRItem(CANDS[1:], PSEUDO, id=2)]
    together = decode(minilm_scorer, items, keep_matrices=True)
    for item, choice in zip(items, together):
        [alone] = decode(minilm_scorer, [item], keep_matrices=True)
        assert choice.matrix.shape == (item.n, len(item.samples))
        # two groupings: 1e-6, above the largest fp32 move across batchings and kernels (2.4e-7)
        np.testing.assert_allclose(choice.matrix, alone.matrix, atol=1e-6, rtol=0)
        assert_canonical_best(choice.best_index, choice.expected_utility, alone.expected_utility, tol=1e-6)


def test_a_candidate_is_left_out_of_its_own_expectation(minilm_scorer):
    a, b = "The cat sat on the mat.", "Stocks fell on Monday."
    [choice] = decode(minilm_scorer, [[a, b]])
    pair = minilm_scorer.compute([a, b], [b, a]).scores
    np.testing.assert_allclose(choice.expected_utility, pair, atol=1e-6, rtol=0)  # not (pair + 1) / 2
    # With pseudo-references nothing is left out, even a pseudo-reference equal to a candidate.
    [given] = decode(minilm_scorer, [MBRItem([a, b], [a, b])])
    assert given.expected_utility[0] > choice.expected_utility[0]


def test_ties_go_to_the_lowest_index(minilm_scorer):
    cat, stocks = "A cat.", "Stocks fell."
    for cands, best in (([cat, stocks, cat], 0), ([stocks, cat, cat], 1)):
        [choice] = decode(minilm_scorer, [cands])
        twins = [k for k, c in enumerate(cands) if c == cat]
        assert choice.expected_utility[twins[0]] == choice.expected_utility[twins[1]]  # bit-identical
        assert choice.best_index == best
    assert best_index(np.array([0.1, 0.5, 0.5])) == 1
    assert expected_utility(np.array([[9.0, 1.0, 3.0], [1.0, 9.0, 3.0]]), True).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", ["minilm", "prism", "bart"])
def test_duplicate_candidates_tie_exactly_and_the_lowest_index_wins(name, kernel):
    """Constructed exact ties: each distinct pair is scored once and rows are summed in sorted
    order, so twins get the same bits on any kernel; the first wins, and nbest lists twins in
    index order, one after the other."""
    scorer = kernel.scorer(name)
    a, b, c = "The cat sat on the mat.", "A cat was sitting on the mat.", "Stocks fell."
    items = [MBRItem([a, c, a, b, a]), MBRItem([c, b, b, a], [b, a, c]), MBRItem([c, c, c])]
    for item, choice in zip(items, decode(scorer, items, nbest=5)):  # nbest: every candidate
        cands, eu = item.candidates, choice.expected_utility
        for text in set(cands):
            twins = [k for k, cand in enumerate(cands) if cand == text]
            assert len({eu[k] for k in twins}) == 1, (cands, eu)
            listed = [row["index"] for row in choice.to_dict()["nbest"] if row["candidate"] == text]
            assert listed == twins
        assert choice.best_index == lowest_best(eu) == cands.index(choice.best)


def test_qe_reranking_scores_each_distinct_candidate_once(golden_dir, monkeypatch):
    from nlgscore.registry import load

    qe = load(f"prism:src:{golden_dir / 'tiny-prism'}", lang="en")
    calls = []
    real = qe.compute

    def counting(predictions, *args, **kwargs):  # a wrapper around the real compute, not a mock
        calls.append(list(predictions))
        return real(predictions, *args, **kwargs)

    monkeypatch.setattr(qe, "compute", counting)
    twins = [CANDS[0], CANDS[3], CANDS[0], CANDS[0]]
    [one, two] = decode(
        qe, [MBRItem(twins, source="Die Katze.", id=1), MBRItem(twins[::-1], source="Die Katze.", id=2)]
    )
    assert calls == [[CANDS[0], CANDS[3]]]  # each distinct (candidate, source) pair once
    assert one.expected_utility[0] == one.expected_utility[2] == one.expected_utility[3] == two.expected_utility[0]
    assert (one.best_index, two.best_index) == (lowest_best(one.expected_utility), lowest_best(two.expected_utility))


def test_qe_reranking_with_prism_src(golden_dir, prism):
    spec = f"prism:src:{golden_dir / 'tiny-prism'}"
    items = [
        MBRItem(CANDS, source="Die Katze saß auf der Matte.", id="a"),
        MBRItem(CANDS[::-1], source="Es regnet.", id="b"),
    ]
    choices = decode(spec, items, lang="en", keep_matrices=True)
    from nlgscore.registry import load

    qe = load(spec, lang="en")
    for item, choice in zip(items, choices):
        expected = np.asarray(qe.compute(item.candidates, sources=[item.source] * item.n).scores)
        np.testing.assert_allclose(choice.expected_utility, expected, atol=1e-6, rtol=0)
        assert_canonical_best(choice.best_index, choice.expected_utility, expected, tol=1e-6)  # the bound above
        assert choice.matrix.shape == (item.n, 1)
    with pytest.raises(ArgumentError, match="item 'x' has no source"):
        decode(qe, [MBRItem(CANDS, id="x")])


@pytest.mark.parametrize(
    "items, message",
    [
        ([["only one"]], "at least 2 texts"),
        ([{"candidates": []}], "at least one text"),
        ([{"candidates": ["a", 3]}], r"candidates\[1\]"),
        ([{"candidates": ["a", "b"], "extra": 1}], "unknown field"),
        ([{"candidates": ["a", "b"], "id": "x"}, {"candidates": ["c", "d"], "id": "x"}], "more than once"),
        ("abc", "list of items"),
    ],
)
def test_bad_items_name_the_item(minilm_scorer, items, message):
    with pytest.raises(NlgscoreError, match=message):
        decode(minilm_scorer, items)
