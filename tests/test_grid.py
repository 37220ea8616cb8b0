"""The grid path of BERTScore (nlgscore.bertscore.grid): a chunk that is a utility matrix is
matched in tiles of texts with one matmul per tile. Checked against pair-by-pair compute (one
pair per call never takes the grid path), on the embedded MiniLM; nothing is mocked."""

from __future__ import annotations

import numpy as np
import pytest

C = ["The cat sat on the mat.", "A cat was sitting on the mat.", "", "Stocks fell on Monday.", "Rain.", "A very long sentence " * 12]
R = ["A cat sat on a mat.", "Markets dropped on Monday.", "The cat sat on the mat.", ""]


def pair_by_pair(scorer, column):
    with pytest.warns(UserWarning):  # the empty texts
        return np.array([[scorer.compute([c], [r]).columns()[column][0] for r in R] for c in C])


@pytest.mark.parametrize("tile", [None, 8])
def test_grid_equals_pair_by_pair_matching(minilm_scorer, monkeypatch, tile):
    from nlgscore.bertscore import grid

    if tile is not None:  # tiles of one or two texts: every tile boundary is crossed
        monkeypatch.setattr(grid, "TILE_TOKENS", tile)
    for column in ("precision", "recall", "f1"):
        with pytest.warns(UserWarning):
            got = minilm_scorer.matrix(C, R, column=column)
        np.testing.assert_allclose(got, pair_by_pair(minilm_scorer, column), atol=1e-6, rtol=0)


def test_grid_with_idf_weights():
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(model_type="minilm", num_layers=4, idf_sents=C + R)
    with pytest.warns(UserWarning):
        got = scorer.matrix(C, R)
    np.testing.assert_allclose(got, pair_by_pair(scorer, "f1"), atol=1e-6, rtol=0)


def test_dense_is_about_coverage():
    from nlgscore.bertscore.grid import dense

    assert dense([(h, r) for h in range(3) for r in range(3, 6)])
    assert not dense([(k, k + 10) for k in range(10)])  # aligned pairs: the pair path
