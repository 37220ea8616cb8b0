"""Summary-level, pair-accuracy and corpus correlations (BARTScore protocol)."""

import numpy as np
import pytest
from scipy import stats

from nlgscore.meta.stats.summary import (
    corpus_correlation,
    document_correlations,
    pair_accuracy,
    summary_level_correlation,
)


def test_summary_level_skips_constant_documents_and_averages():
    human = [[1, 2, 3, 4], [4, 3, 2, 1], [2, 2, 2, 2], [1, 2, 3, 4]]
    metric = [[1, 2, 4, 3], [1, 2, 3, 4], [1, 2, 3, 4], [5, 5, 5, 5]]
    # doc 0: rho = 1 - 6*2/(4*15) = 0.8; doc 1: -1; doc 2 (constant human) and doc 3
    # (constant metric) skipped
    assert summary_level_correlation(human, metric) == pytest.approx((0.8 - 1.0) / 2)
    assert document_correlations(human, metric).tolist() == pytest.approx([0.8, -1.0])
    # Kendall tau-b: doc 0 has 5 concordant, 1 discordant of 6 pairs => 4/6
    assert summary_level_correlation(human, metric, "kendall") == pytest.approx((4 / 6 - 1.0) / 2)


def test_summary_level_all_constant_or_nan_raise():
    with pytest.raises(ValueError, match="constant"):
        summary_level_correlation([[1, 1], [2, 2]], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="NaN"):
        summary_level_correlation([[1, np.nan]], [[1, 2]])
    with pytest.raises(ValueError, match="method"):
        summary_level_correlation([[1, 2]], [[1, 2]], method="cosine")


def test_pair_accuracy_is_strict():
    assert pair_accuracy([2, 1, 3, 0], [1, 1, 2, 5]) == 0.5  # the tie counts as wrong


def test_corpus_correlation_matches_scipy_and_rejects_constants():
    rng = np.random.default_rng(0)
    h, m = rng.random(30), rng.random(30)
    assert corpus_correlation(h, m) == pytest.approx(stats.spearmanr(h, m)[0])
    assert corpus_correlation(h, m, "pearson") == pytest.approx(stats.pearsonr(h, m)[0])
    with pytest.raises(ValueError, match="non-constant"):
        corpus_correlation([1, 1, 1], [1, 2, 3])
