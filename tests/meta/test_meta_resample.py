"""Bootstrap CIs, paired bootstrap, BARTScore subsets, paired-bs / paired-ar system tests."""

import numpy as np
import pytest

from nlgscore.meta.stats.resample import (
    bootstrap_ci,
    compare_systems_bootstrap,
    compare_systems_randomization,
    paired_bootstrap,
    percentile_interval,
    subset_significance,
)
from nlgscore.meta.stats.wmt import darr_kendall_tau, pearson


def test_percentile_interval_uses_sacrebleu_order_statistics():
    # n = 1000, alpha 0.05: the value at index 25 and at index 1000 - 25 - 1
    assert percentile_interval(np.arange(1000)[::-1]) == (25.0, 974.0)


def test_bootstrap_is_deterministic_with_seed_and_changes_without():
    rng = np.random.default_rng(0)
    human = rng.normal(size=200)
    metric = human + rng.normal(size=200)
    a = bootstrap_ci(pearson, (human, metric), n_samples=300, seed=11)
    b = bootstrap_ci(pearson, (human, metric), n_samples=300, seed=11)
    c = bootstrap_ci(pearson, (human, metric), n_samples=300, seed=12)
    assert a == b and a != c
    assert a.value == pytest.approx(np.corrcoef(human, metric)[0, 1])
    assert a.low < a.value < a.high


def test_bootstrap_ci_of_a_mean_covers_the_truth_about_95_percent():
    rng = np.random.default_rng(1)
    covered = 0
    trials = 200
    for _ in range(trials):
        sample = rng.normal(loc=2.0, size=60)
        ci = bootstrap_ci(np.mean, (sample,), n_samples=400, seed=int(rng.integers(1 << 30)))
        covered += ci.low <= 2.0 <= ci.high
    assert 0.88 <= covered / trials <= 0.99


def test_bootstrap_rejects_nan_statistic():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci(lambda x: float("nan"), ([1.0, 2.0, 3.0],), n_samples=5)


def test_paired_bootstrap_identical_metrics_never_win():
    better, worse = [3, 1, 2, 5, 4, 0], [1, 2, 1, 2, 1, 2]
    result = paired_bootstrap(darr_kendall_tau, (better, worse), (better, worse), n_samples=200, seed=1)
    assert result.wins_a == result.wins_b == 0
    assert result.p_value == 1.0


def test_paired_bootstrap_clearly_better_metric():
    rng = np.random.default_rng(2)
    n = 300
    good_b, good_w = rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)  # mostly concordant
    bad_b, bad_w = rng.normal(0.0, 1.0, n), rng.normal(0.0, 1.0, n)  # chance
    result = paired_bootstrap(darr_kendall_tau, (good_b, good_w), (bad_b, bad_w), n_samples=500, seed=3)
    assert result.value_a > result.value_b
    assert result.p_value < 0.01
    reverse = paired_bootstrap(darr_kendall_tau, (bad_b, bad_w), (good_b, good_w), n_samples=500, seed=3)
    assert reverse.p_value > 0.99


def test_subset_significance_bartscore_protocol():
    rng = np.random.default_rng(4)
    n = 200
    good = (rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n))
    bad = (rng.normal(0.0, 1.0, n), rng.normal(0.0, 1.0, n))
    result = subset_significance(darr_kendall_tau, good, bad)
    assert (result.n_iterations, result.threshold) == (1000, 950)
    assert result.wins_a > 950 and result.verdict == "a"
    assert subset_significance(darr_kendall_tau, bad, good).verdict == "b"
    assert subset_significance(darr_kendall_tau, good, good).verdict == "b"  # ties are not wins


def test_subset_significance_uses_80_percent_without_replacement():
    seen = []

    def record(values):
        seen.append(np.sort(values))
        return 0.0

    subset_significance(record, (np.arange(10.0),), (np.arange(10.0),), n_iterations=3)
    assert all(len(s) == 8 and len(set(s)) == 8 for s in seen)


def test_compare_identical_systems_p_is_one():
    base = np.random.default_rng(5).random(50)
    for results in (compare_systems_bootstrap(base, [base], 300), compare_systems_randomization(base, [base], 300)):
        assert results[0].p_value is None
        assert results[1].p_value == 1.0
        assert results[1].score == pytest.approx(base.mean())


def test_compare_clearly_better_system_small_p():
    rng = np.random.default_rng(6)
    base = rng.normal(0.5, 0.1, 200)
    better = base + 0.05 + rng.normal(0, 0.02, 200)
    bs = compare_systems_bootstrap(base, [better], n_samples=1000, seed=1)
    ar = compare_systems_randomization(base, [better], n_trials=2000, seed=1)
    assert bs[1].p_value == pytest.approx(1 / 1001)  # no resample as extreme: (0 + 1) / (N + 1)
    assert ar[1].p_value == pytest.approx(1 / 2001)
    assert bs[1].ci_low < bs[1].mean < bs[1].ci_high
    assert bs[1].ci_low > bs[0].ci_high  # the CIs do not even overlap


def test_randomization_p_matches_exact_permutation_distribution():
    base = np.array([0.1, 0.5, 0.3, 0.2])
    system = np.array([0.9, 0.9, 0.8, 0.7])
    # exact: of the 16 sign patterns only all-same and all-flipped reach the observed gap
    result = compare_systems_randomization(base, [system], n_trials=20000, seed=2)
    assert result[1].p_value == pytest.approx(2 / 16, abs=0.01)


def test_compare_rejects_unequal_lengths_and_nan():
    with pytest.raises(ValueError, match="lengths"):
        compare_systems_bootstrap([0.1, 0.2, 0.3], [[0.1, 0.2]])
    with pytest.raises(ValueError, match="NaN"):
        compare_systems_randomization([0.1, 0.2, 0.3], [[0.1, float("nan"), 0.2]])
