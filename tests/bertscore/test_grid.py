"""The grid path of BERTScore (nlgscore.bertscore.grid): a chunk that is a utility matrix is
matched in tiles of texts with one matmul per tile. Checked against compute over the same pairs
with the grid switched off (the pair path of greedy_match), on the embedded MiniLM; nothing is mocked."""

from __future__ import annotations

import numpy as np
import pytest

C = [
    "The cat sat on the mat.",
    "A cat was sitting on the mat.",
    "",
    "Stocks fell on Monday.",
    "Rain.",
    "A very long sentence " * 12,
]
R = ["A cat sat on a mat.", "Markets dropped on Monday.", "The cat sat on the mat.", ""]


def pair_path(scorer, monkeypatch):
    """Every column of compute over all (C, R) pairs, the grid switched off: {column: (C, R) array}."""
    from nlgscore.bertscore import grid

    with monkeypatch.context() as patch, pytest.warns(UserWarning):  # the empty texts warn
        patch.setattr(grid, "MIN_DENSITY", float("inf"))
        columns = scorer.compute([c for c in C for _ in R], [r for _ in C for r in R]).columns()
    return {name: np.asarray(values).reshape(len(C), len(R)) for name, values in columns.items()}


@pytest.mark.parametrize("tile", [None, 8])
def test_grid_equals_pair_by_pair_matching(minilm_scorer, monkeypatch, tile):
    from nlgscore.bertscore import grid

    if tile is not None:  # tiles of one or two texts: every tile boundary is crossed
        monkeypatch.setattr(grid, "TILE_TOKENS", tile)
    expected = pair_path(minilm_scorer, monkeypatch)
    for column in ("precision", "recall", "f1"):
        with pytest.warns(UserWarning):
            got = minilm_scorer.matrix(C, R, column=column)
        np.testing.assert_allclose(got, expected[column], atol=1e-6, rtol=0)


def test_grid_with_idf_weights(monkeypatch):
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(model_type="minilm", num_layers=4, idf_sents=C + R)
    with pytest.warns(UserWarning):
        got = scorer.matrix(C, R)
    np.testing.assert_allclose(got, pair_path(scorer, monkeypatch)["f1"], atol=1e-6, rtol=0)


def test_dense_is_about_coverage():
    from nlgscore.bertscore.grid import dense

    assert dense([(h, r) for h in range(3) for r in range(3, 6)])
    assert not dense([(k, k + 10) for k in range(10)])  # aligned pairs: the pair path


def test_compute_over_a_product_takes_the_grid_and_agrees(minilm_scorer, monkeypatch):
    from nlgscore.bertscore import grid

    calls = []
    real = grid.grid_match
    monkeypatch.setattr(grid, "grid_match", lambda *a: calls.append(1) or real(*a))  # the real kernel, counted
    import nlgscore.bertscore.pairs as pairs

    monkeypatch.setattr(pairs, "grid_match", grid.grid_match)
    with pytest.warns(UserWarning):
        got = minilm_scorer.compute([c for c in C for _ in R], [r for _ in C for r in R]).columns()
    assert calls  # the chunk was dense: the grid path of compute ran
    expected = pair_path(minilm_scorer, monkeypatch)
    for column in ("precision", "recall", "f1"):
        np.testing.assert_allclose(np.asarray(got[column]).reshape(len(C), len(R)), expected[column], atol=1e-6, rtol=0)
