"""Utility matrices: ``scorer.matrix(predictions, references)`` on real models.

BERTScore on the packaged MiniLM, Prism and BARTScore on the tiny golden checkpoints. The
encode counts wrap the real encoders (a forward pre-hook, a counting wrapper around
``Encoder.embed``); nothing is mocked.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

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


def all_pairs(scorer, column=None, **options):
    """compute() over every (prediction, reference) pair, in shuffled order, as a matrix."""
    cells = [(i, j) for i in range(len(P)) for j in range(len(R))]
    random.Random(0).shuffle(cells)
    result = scorer.compute([P[i] for i, _ in cells], [R[j] for _, j in cells], **options)
    values = result.columns()[column or result.primary]
    out = np.zeros((len(P), len(R)))
    for (i, j), value in zip(cells, values):
        out[i, j] = value
    return out


def test_bertscore_matrix_equals_compute_over_all_pairs(minilm_scorer):
    got = minilm_scorer.matrix(P, R)
    assert got.shape == (len(P), len(R)) and got.dtype == np.float64
    np.testing.assert_allclose(got, all_pairs(minilm_scorer), atol=1e-6, rtol=0)
    np.testing.assert_allclose(
        minilm_scorer.matrix(P, R, column="precision"), all_pairs(minilm_scorer, "precision"), atol=1e-6, rtol=0
    )
    assert np.array_equal(got[0], got[2])  # a repeated prediction gets the same row
    assert not np.allclose(got, minilm_scorer.matrix(P, R, column="recall"))


def test_prism_matrix_equals_compute_over_all_pairs(prism):
    np.testing.assert_allclose(prism.matrix(P, R), all_pairs(prism), atol=1e-6, rtol=0)
    got = prism.matrix(P, R, column="H_cand_given_ref")
    np.testing.assert_allclose(got, all_pairs(prism, "H_cand_given_ref"), atol=1e-6, rtol=0)


def test_bartscore_matrix_equals_compute_over_all_pairs(bart):
    np.testing.assert_allclose(bart.matrix(P, R), all_pairs(bart), atol=1e-6, rtol=0)
    got = bart.matrix(P, R, direction="recall", agg="max")
    np.testing.assert_allclose(got, all_pairs(bart, direction="recall"), atol=1e-6, rtol=0)


def test_bertscore_encodes_each_distinct_text_once_across_chunks(monkeypatch):
    from nlgscore.bertscore import BERTScorer, pairs

    # A budget so small that the matrix's pairs span several chunks (the fixture's default
    # budget would put them all in one).
    scorer = BERTScorer(model_type="minilm", num_layers=4, max_tokens=1)
    embedded, chunks = [], []
    real_embed, real_plan = scorer.encoder.embed, pairs._plan_chunks

    def counting_embed(batch, *args, **kwargs):
        embedded.extend(tuple(ids) for ids in batch)
        return real_embed(batch, *args, **kwargs)

    def recording_plan(*args):
        chunks.append(real_plan(*args))
        return chunks[-1]

    monkeypatch.setattr(scorer.encoder, "embed", counting_embed)
    monkeypatch.setattr(pairs, "_plan_chunks", recording_plan)
    got = scorer.matrix(P, R)
    assert len(chunks[0]) > 1
    assert len(embedded) == len(set(embedded)) == len(set(P) | set(R))
    np.testing.assert_allclose(got, all_pairs(scorer), atol=1e-6, rtol=0)


@pytest.mark.parametrize("max_tokens", [None, 16])  # 16: the sources' states outgrow the engine's cache
@pytest.mark.parametrize("metric", ["prism", "bart"])
def test_seq2seq_encodes_each_distinct_source_once(metric, max_tokens, request):
    scorer = request.getfixturevalue(metric)
    model = scorer._loaded.model if metric == "prism" else scorer.model
    rows = []
    handle = model.get_encoder().register_forward_pre_hook(
        lambda mod, args, kwargs: rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        got = scorer.matrix(P, R, max_tokens=max_tokens)
    finally:
        handle.remove()
    # Both directions are scored (Prism-ref, BARTScore F): every distinct text is a source once.
    assert sum(rows) == len(set(P) | set(R))
    np.testing.assert_allclose(got, all_pairs(scorer), atol=1e-6, rtol=0)


def test_empty_inputs(minilm_scorer, prism):
    assert minilm_scorer.matrix([], R).shape == (0, len(R))
    assert minilm_scorer.matrix(P, []).shape == (len(P), 0)
    assert prism.matrix([], []).shape == (0, 0)
    with pytest.raises(ValueError, match="column"):
        minilm_scorer.matrix([], [], column="nope")


def test_argument_errors_name_the_argument(minilm_scorer, prism):
    with pytest.raises(TypeError, match=r"^predictions must be"):
        minilm_scorer.matrix("a b", R)
    with pytest.raises(TypeError, match=r"^references\[1\] must be a str"):
        minilm_scorer.matrix(P, ["a", ["b"]])
    with pytest.raises(ValueError, match=r"^column must be one of precision, recall, f1"):
        minilm_scorer.matrix(P, R, column="H_cand_given_ref")
    with pytest.raises((TypeError, ValueError), match=r"^column must be"):
        minilm_scorer.matrix(P, R, column=1)
