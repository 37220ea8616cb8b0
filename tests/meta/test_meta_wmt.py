"""WMT statistics: daRR tau, daRR from DA, Pearson, Williams, hybrids, model selection.

Expected numbers are computed independently: by counting by hand, with scipy, or with the
determinant form of the Williams test instead of the expanded K used by the library.
"""

import math

import numpy as np
import pytest
from scipy import stats

from nlgscore.meta.stats.wmt import (
    darr_kendall_tau,
    darr_pairs_from_da,
    hybrid_systems,
    model_selection,
    pearson,
    williams_test,
    williams_test_scores,
)


def test_tau_counts_concordant_minus_discordant():
    # pairs: 3>1 C, 2=2 tie -> D, 1<4 D, 5>0 C, 0.7>0.6 C  => (3 - 2) / 5
    assert darr_kendall_tau([3, 2, 1, 5, 0.7], [1, 2, 4, 0, 0.6]) == pytest.approx(0.2)


def test_tau_metric_ties_are_discordant():
    assert darr_kendall_tau([1, 1, 1], [1, 1, 1]) == -1.0


def test_tau_lower_is_better_flips_sign_but_not_ties():
    better, worse = [1, 2, 5], [3, 4, 5]
    assert darr_kendall_tau(better, worse) == -1.0
    # flipped: 1<3 C, 2<4 C, tie D  => 1/3
    assert darr_kendall_tau(better, worse, lower_is_better=True) == pytest.approx(1 / 3)


def test_tau_rejects_nan_and_length_mismatch():
    with pytest.raises(ValueError, match="NaN"):
        darr_kendall_tau([1.0, float("nan")], [0.0, 0.0])
    with pytest.raises(ValueError, match="length"):
        darr_kendall_tau([1.0, 2.0], [0.0])


def test_darr_from_da_uses_strict_25_point_margin_and_higher_is_better():
    da = {
        (1, "A"): 90.0,
        (1, "B"): 64.0,
        (1, "C"): 65.0,  # A-B 26 kept, A-C 25 dropped, B-C 1 dropped
        (2, "A"): 10.0,
        (2, "B"): 80.0,  # B better
        (3, "A"): 50.0,  # alone: no pair
    }
    pairs = darr_pairs_from_da(da)
    assert [(p.segment, p.better, p.worse) for p in pairs] == [(1, "A", "B"), (2, "B", "A")]
    assert pairs[1].better_da == 80.0 and pairs[1].worse_da == 10.0


def test_darr_from_da_counts_all_pairs():
    # 4 systems at 0, 30, 60, 90: pairs with |diff| > 25 are all 6 pairs.
    da = {(0, s): v for s, v in zip("ABCD", (0, 30, 60, 90))}
    assert len(darr_pairs_from_da(da)) == 6
    assert len(darr_pairs_from_da(da, margin=30)) == 3  # only the 60- and 90-point gaps


def test_pearson_matches_closed_form_by_hand():
    h, m = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    # means 3 and 3; deviations (-2,-1,0,1,2) and (-1,-2,1,0,2): sum of products 2+2+0+0+4 = 8
    assert pearson(h, m) == pytest.approx(8 / math.sqrt(10 * 10))
    assert pearson(h, m) == pytest.approx(stats.pearsonr(h, m)[0])


def test_pearson_needs_three_items_and_variation():
    with pytest.raises(ValueError, match="at least 3"):
        pearson([1, 2], [2, 1])
    with pytest.raises(ValueError, match="all equal"):
        pearson([1, 2, 3], [5, 5, 5])


def _williams_by_determinant(r12, r13, r23, n):
    det = np.linalg.det(np.array([[1, r12, r13], [r12, 1, r23], [r13, r23, 1]]))
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3)
    return t, stats.t.sf(t, n - 3)


@pytest.mark.parametrize("r12,r13,r23,n", [(0.9, 0.8, 0.85, 20), (0.95, 0.7, 0.6, 10), (0.5, 0.6, 0.3, 8)])
def test_williams_against_determinant_form(r12, r13, r23, n):
    t, p = williams_test(r12, r13, r23, n)
    t_ref, p_ref = _williams_by_determinant(r12, r13, r23, n)
    assert t == pytest.approx(t_ref, rel=1e-12)
    assert p == pytest.approx(p_ref, rel=1e-12)


def test_williams_is_one_sided_and_needs_four_items():
    t_ab, p_ab = williams_test(0.9, 0.8, 0.85, 20)
    t_ba, p_ba = williams_test(0.8, 0.9, 0.85, 20)
    assert t_ab == pytest.approx(-t_ba) and p_ab + p_ba == pytest.approx(1.0)
    with pytest.raises(ValueError, match="more than 3"):
        williams_test(0.9, 0.8, 0.85, 3)


def test_williams_scores_uses_absolute_correlations():
    human = [1, 2, 3, 4, 5, 6, 7, 8]
    a = [1, 2, 3, 4, 5, 6, 7, 9]
    b = [2, 1, 4, 3, 6, 5, 8, 7]
    t, p = williams_test_scores(human, a, b)
    # an error metric (negated A) must be judged exactly like A
    t_neg, p_neg = williams_test_scores(human, [-x for x in a], b)
    assert (t, p) == pytest.approx((t_neg, p_neg))
    r12, r13, r23 = stats.pearsonr(human, a)[0], stats.pearsonr(human, b)[0], stats.pearsonr(a, b)[0]
    assert (t, p) == pytest.approx(_williams_by_determinant(r12, r13, r23, 8))
    assert p < 0.05


def test_hybrids_average_sampled_segments_and_are_seeded():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(5, 40))
    metric = 3 * human + 1  # metric is a linear function of human per segment
    h1, m1 = hybrid_systems(human, metric, n_hybrids=500, seed=7)
    h2, m2 = hybrid_systems(human, metric, n_hybrids=500, seed=7)
    assert np.array_equal(h1, h2) and np.array_equal(m1, m2)
    assert np.allclose(m1, 3 * h1 + 1)  # averages of the same segments
    # every hybrid lies between the segment-wise min and max of the systems
    assert np.all(h1 >= human.min(axis=0).mean() - 1e-12) and np.all(h1 <= human.max(axis=0).mean() + 1e-12)


def test_hybrids_mix_exactly_two_systems():
    human = np.array([[0.0] * 10, [1.0] * 10, [100.0] * 10])
    _, metric = hybrid_systems(human, human, n_hybrids=300, seed=1)
    # a mix of systems 0 and 1 lies in [0, 1]; a mix with system 2 that takes at least one
    # of its segments is >= 10: anything in between would mean a third system or a bad mean
    assert np.all((metric <= 1.0) | (metric >= 10.0))
    assert np.any(metric >= 10.0) and np.any((metric > 0.0) & (metric < 1.0))


def test_hybrids_skip_missing_human_scores():
    human = np.array([[1.0, np.nan], [3.0, np.nan]])
    h, _ = hybrid_systems(human, np.zeros((2, 2)), n_hybrids=50, seed=3)
    assert set(np.round(h, 9)) <= {1.0, 3.0}
    with pytest.raises(ValueError, match="metric"):
        hybrid_systems(human, np.full((2, 2), np.nan), n_hybrids=5)


def test_model_selection_perfect_and_reversed_metric():
    human = np.linspace(0, 1, 50)
    perfect = model_selection(human, human, sample_size=10, repeats=500, seed=1)
    assert (perfect.hits_at_1, perfect.mrr, perfect.diff) == (1.0, 1.0, 0.0)
    worst = model_selection(human, -human, sample_size=10, repeats=500, seed=1)
    assert worst.hits_at_1 == 0.0 and worst.mrr == pytest.approx(0.1)  # always rank 10 of 10
    assert worst.diff > 0.5


def test_model_selection_random_metric_matches_chance():
    rng = np.random.default_rng(5)
    human, metric = rng.random(1000), rng.random(1000)
    result = model_selection(human, metric, sample_size=10, repeats=4000, seed=2)
    assert result.hits_at_1 == pytest.approx(0.1, abs=0.02)
    assert result.mrr == pytest.approx(sum(1 / k for k in range(1, 11)) / 10, abs=0.02)
