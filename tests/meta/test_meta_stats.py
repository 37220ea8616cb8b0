"""nlgscore.meta.stats against hand-computed cases, brute-force versions of mt-metrics-eval's
definitions written out here, scipy, and the properties the measures must have."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as scipy_stats

from nlgscore.meta import stats


def _random(seed: int, systems: int = 5, items: int = 12, levels: int = 4):
    """Scores with many ties (few distinct values) and some unrated cells."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, levels, size=(systems, items)).astype(float)
    human[rng.random(human.shape) < 0.15] = np.nan
    metric = np.round(rng.normal(size=(systems, items)), 1)
    return human, metric


def _acc23_brute(human, metric, epsilon):
    """mtme acc_23 per item ((con + ties_both) / pairs), averaged over items with a pair; pair-by-pair."""
    per_item = []
    for column in range(human.shape[1]):
        rated = [k for k in range(human.shape[0]) if not np.isnan(human[k, column])]
        good = pairs = 0
        for a, b in itertools.combinations(rated, 2):
            dh, dm = human[a, column] - human[b, column], metric[a, column] - metric[b, column]
            metric_tie = abs(dm) <= epsilon
            good += (dh == 0) if metric_tie else (dh != 0 and np.sign(dh) == np.sign(dm))
            pairs += 1
        if pairs:
            per_item.append(good / pairs)
    return float(np.mean(per_item))


def _tau_optimization_brute(human, metric):
    """Every candidate epsilon (0 and each |metric difference| of a rated pair), best first-found."""
    candidates = [0.0]
    for column in range(human.shape[1]):
        rated = [k for k in range(human.shape[0]) if not np.isnan(human[k, column])]
        candidates += [abs(metric[a, column] - metric[b, column]) for a, b in itertools.combinations(rated, 2)]
    best = max(sorted(set(candidates)), key=lambda e: (_acc23_brute(human, metric, e), -e))
    return _acc23_brute(human, metric, best), best


def _p_values_brute(seg, signs):
    n = seg.shape[0]
    p = np.full((n, n), np.nan)
    seg32, signs32 = seg.astype(np.float32), signs.astype(np.float32)
    for a, b in itertools.combinations(range(n), 2):
        observed = seg32[a].sum() - seg32[b].sum()
        null = [np.dot(s, seg32[a]) - np.dot(s, seg32[b]) for s in signs32]
        p[a, b] = np.mean(np.array(null) >= observed)
    return p


def test_pairwise_accuracy_by_hand_and_ties():
    # pairs (0,1) agree, (0,2) agree, (1,2) disagree
    assert stats.pairwise_accuracy([1, 2, 3], [10, 30, 20]) == pytest.approx(2 / 3)
    # a pair tied by both agrees, tied by one only disagrees (mtme Agreement: sign equality)
    assert stats.pairwise_accuracy([1, 1, 2], [5, 5, 6]) == 1.0
    assert stats.pairwise_accuracy([1, 1, 2], [5, 6, 7]) == pytest.approx(2 / 3)


def test_accuracy_invariant_to_monotone_transforms():
    rng = np.random.default_rng(3)
    human, metric = rng.normal(size=9), rng.normal(size=9)
    value = stats.pairwise_accuracy(human, metric)
    for transform in (np.exp, lambda x: 3 * x + 7, lambda x: x**3):
        assert stats.pairwise_accuracy(human, transform(metric)) == value
    h, m = _random(4)
    assert stats.acc_eq(h, np.exp(m)) == stats.acc_eq(h, m)  # epsilon 0: only the order counts


@pytest.mark.parametrize("seed", range(6))
def test_acc_t_equals_brute_force_tau_optimization(seed):
    human, metric = _random(seed)
    value, epsilon = stats.acc_t(human, metric)
    expected, expected_epsilon = _tau_optimization_brute(human, metric)
    assert value == pytest.approx(expected, abs=1e-12) and epsilon == pytest.approx(expected_epsilon)
    for e in (0.0, 0.1, 0.35):
        assert stats.acc_eq(human, metric, e) == pytest.approx(_acc23_brute(human, metric, e), abs=1e-12)
    # acc-t is at least acc_eq without introduced ties (epsilon 0) and is reached at its epsilon
    assert value >= stats.acc_eq(human, metric, 0.0)
    assert stats.acc_eq(human, metric, epsilon) == pytest.approx(value, abs=1e-12)


def test_acc_t_by_hand():
    human = np.array([[1.0, 3], [1.0, 2], [2.0, 1]])
    metric = np.array([[0.50, 0.9], [0.52, 0.8], [0.90, 0.1]])
    # epsilon 0: item 0 has pairs (s0,s1) human tie/metric not -> 0, (s0,s2) ok, (s1,s2) ok -> 2/3; item 1: 3/3
    assert stats.acc_eq(human, metric, 0.0) == pytest.approx((2 / 3 + 1) / 2)
    assert stats.acc_t(human, metric) == (1.0, pytest.approx(0.02))


def test_correlations_equal_scipy_no_grouping_and_item_grouped():
    human, metric = _random(7, systems=6, items=15, levels=6)
    rated = ~np.isnan(human)
    assert stats.correlation(human, metric) == pytest.approx(scipy_stats.pearsonr(human[rated], metric[rated])[0])
    assert stats.correlation(human, metric, "kendall") == pytest.approx(
        scipy_stats.kendalltau(human[rated], metric[rated])[0]
    )
    for method, function in (("pearson", scipy_stats.pearsonr), ("kendall", scipy_stats.kendalltau)):
        per_item = []
        for c in range(human.shape[1]):
            keep = rated[:, c]
            if keep.sum() >= 2 and np.ptp(human[keep, c]) > 0 and np.ptp(metric[keep, c]) > 0:
                per_item.append(function(human[keep, c], metric[keep, c])[0])
        assert stats.correlation(human, metric, method, by_item=True) == pytest.approx(np.mean(per_item))


def test_pairwise_p_values_equal_the_permutation_test_written_out():
    rng = np.random.default_rng(0)
    seg = rng.normal(size=(4, 30))
    signs = stats.permutation_signs(30, 300, seed=4)
    assert set(np.unique(signs)) == {-1.0, 1.0} and signs.shape == (300, 30)
    np.testing.assert_array_equal(stats.pairwise_p_values(seg, signs), _p_values_brute(seg, signs))


def test_spa_is_one_for_full_agreement_and_drops_otherwise():
    rng = np.random.default_rng(1)
    human = rng.normal(size=(5, 40)) + np.arange(5)[:, None]
    signs = stats.permutation_signs(40)
    assert stats.soft_pairwise_accuracy(human, 2 * human + 3, signs) == 1.0
    reversed_metric = -human
    value = stats.soft_pairwise_accuracy(human, reversed_metric, signs)
    assert 0 <= value < 0.5
    p_h, p_m = stats.pairwise_p_values(human, signs), stats.pairwise_p_values(reversed_metric, signs)
    upper = np.triu_indices(5, 1)
    assert value == pytest.approx(1 - np.mean(np.abs(p_h - p_m)[upper]))


def test_cluster_ranks_and_permutation_tests():
    assert stats.cluster_ranks(np.array([[0, 0.3, 0.01], [0, 0, 0.2], [0, 0, 0]])) == [1, 1, 2]
    assert stats.cluster_ranks(np.array([[0, 0.01, 0.01], [0, 0, 0.01], [0, 0, 0]])) == [1, 2, 3]
    rng = np.random.default_rng(2)
    human = rng.normal(size=200)
    good, bad = human + 0.3 * rng.normal(size=200), rng.normal(size=200)
    mask = np.ones(200, bool)
    pearson = lambda m: stats.CORRELATIONS["pearson"](human, m)  # noqa: E731
    assert stats.permutation_test(pearson, good, bad, mask, 300, seed=1) < 0.05
    assert stats.permutation_test(pearson, bad, good, mask, 300, seed=1) > 0.5
    same = stats.permutation_test(pearson, good, good.copy(), mask, 300, seed=1)
    assert same == 1.0  # identical metrics: every resample ties the observed difference (0 >= 0)
    outcomes = rng.integers(0, 2, size=500).astype(float)
    weight = np.full(500, 1 / 500)
    assert stats.pairs_permutation_test(np.ones(500), outcomes, weight, 300, seed=1) < 0.05


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="same shape|one shape"):
        stats.correlation(np.zeros((2, 3)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        stats.correlation(np.ones((2, 2)), np.array([[1, np.inf], [0, 1]]))
    with pytest.raises(ValueError, match="epsilon"):
        stats.acc_eq(np.ones((2, 2)), np.ones((2, 2)), -1)
    with pytest.raises(ValueError, match="two systems"):
        stats.acc_t(np.array([[1.0], [np.nan]]), np.array([[1.0], [2.0]]))
