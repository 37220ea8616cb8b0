"""Resampling: bootstrap confidence intervals and paired significance tests.

* ``bootstrap_ci``: percentile bootstrap of any statistic (Koehn 2004; WMT18 findings use it
  for 95% CIs of the segment-level tau, Graham et al. 2014).
* ``paired_bootstrap``: Koehn (2004) paired bootstrap between two metrics on the same items.
* ``subset_significance``: BARTScore's variant (1000 random 80% subsets without
  replacement, seed 666; "significantly better" when winning more than 950 of them).
* ``compare_systems_bootstrap`` / ``compare_systems_randomization``: system comparison on
  segment scores like sacreBLEU 2.x ``--paired-bs`` / ``--paired-ar`` (Koehn 2004;
  Riezler and Maxwell 2005; Clark et al. 2011).

``data`` arguments are tuples of equally long 1-D (or ``(items, ...)``) arrays; every
resample draws the same item indices from each of them, so paired structure is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.meta.stats.correlation import as_finite_array

Statistic = Callable[..., float]
DEFAULT_SEED = 12345  # sacreBLEU's default SACREBLEU_SEED, so runs are reproducible by default
# Most resamples a run takes (bootstrap resamples, permutation-test resamples, compare's trials):
# 1000 is the field's default (sacreBLEU, mt-metrics-eval); 100,000 already puts the Monte-Carlo
# error of a p-value near 0.05 under 0.001, and on a WMT test set it runs for hours. A larger
# value is a typo, refused before any scoring.
MAX_RESAMPLES = 100_000
# A resampled statistic that equals the observed one up to rounding counts as "as extreme".
_RELATIVE_TOLERANCE = 1e-9


def check_seed(seed: object, flag: str = "--seed") -> int:
    """A resampling seed: an integer >= 0 (what numpy's generators take), else an error naming ``seed``.

    >>> check_seed(12345)
    12345
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: seed must be an integer >= 0 (--seed), got -1
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentTypeError(f"seed must be an integer >= 0 ({flag}), got {seed!r}")
    if seed < 0:
        raise ArgumentError(f"seed must be an integer >= 0 ({flag}), got {seed}")
    return int(seed)


def check_resamples(value: object, name: str, flag: str, minimum: int = 0) -> int:
    """A number of resamples: an integer from ``minimum`` to ``MAX_RESAMPLES``, else an error naming ``name``.

    >>> check_resamples(1000, "permutations", "--permutations")
    1000
    >>> check_resamples(10**9, "permutations", "--permutations")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: permutations must be at most 100000 (--permutations), got 1000000000:
    1000 is the usual number (sacreBLEU, mt-metrics-eval), and 100000 already takes hours on a WMT test set
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ArgumentError(f"{name} must be an integer >= {minimum} ({flag}), got {value!r}")
    if value > MAX_RESAMPLES:
        raise ArgumentError(
            f"{name} must be at most {MAX_RESAMPLES} ({flag}), got {value}: 1000 is the usual number "
            f"(sacreBLEU, mt-metrics-eval), and {MAX_RESAMPLES} already takes hours on a WMT test set"
        )
    return int(value)


@dataclass(frozen=True)
class Interval:
    """A statistic on the full data with its bootstrap confidence interval."""

    value: float
    low: float
    high: float


def _as_items(data: Sequence[np.ndarray]) -> Tuple[Tuple[np.ndarray, ...], int]:
    arrays = tuple(np.asarray(a) for a in data)
    if not arrays:
        raise ArgumentError("data must hold at least one array")
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ArgumentError(f"data arrays differ in length: {[len(a) for a in arrays]}")
    if n < 2:
        raise ArgumentError(f"resampling needs at least 2 items, got {n}")
    return arrays, n


def _evaluate(statistic: Statistic, arrays: Tuple[np.ndarray, ...], index: Optional[np.ndarray] = None) -> float:
    picked = arrays if index is None else tuple(a[index] for a in arrays)
    value = float(statistic(*picked))
    if np.isnan(value):
        raise ArgumentError("the statistic returned NaN on a resample; too few items or constant scores")
    return value


def percentile_interval(samples: ArrayLike, alpha: float = 0.05) -> Tuple[float, float]:
    """Two-sided ``1 - alpha`` interval from order statistics of resampled values.

    The ``k = floor(n * alpha / 2)``-th smallest and largest values, as in sacreBLEU's
    ``estimate_ci`` (for n = 1000, alpha = 0.05: the 26th and 975th of the sorted values).

    >>> percentile_interval(range(1000))
    (25.0, 974.0)
    """
    ordered = np.sort(np.asarray(samples, dtype=float))
    if not 0 < alpha < 1:
        raise ArgumentError(f"alpha must be in (0, 1), got {alpha}")
    k = int(len(ordered) * alpha / 2)
    return float(ordered[k]), float(ordered[len(ordered) - k - 1])


def bootstrap_ci(
    statistic: Statistic,
    data: Sequence[np.ndarray],
    n_samples: int = 1000,
    seed: int = DEFAULT_SEED,
    alpha: float = 0.05,
) -> Interval:
    """Percentile bootstrap CI of ``statistic(*data)``, resampling items with replacement.

    Args:
        statistic: the statistic, called with one array per entry of ``data`` (e.g.
            `darr_kendall_tau` on ``(better, worse)``); it must not return NaN on a resample.
        data: equally long arrays holding the items, one entry per argument of ``statistic``;
            every resample draws the same item indices from each, so paired values stay paired.
        n_samples: the number of bootstrap resamples (1000, the field's default).
        seed: the seed of numpy's generator; the default is sacreBLEU's, so runs repeat.
        alpha: the interval is two-sided ``1 - alpha`` (0.05: a 95% interval), its bounds order
            statistics of the resampled values as sacreBLEU's ``estimate_ci`` picks them.

    Returns:
        The statistic on the full data (``value``) with the interval's bounds (``low``, ``high``).

    Raises:
        ArgumentError: ``data`` is empty, its arrays differ in length or hold fewer than 2 items,
            ``alpha`` is outside (0, 1), or the statistic returns NaN.

    Example:
        >>> from nlgscore.meta.stats.wmt import darr_kendall_tau
        >>> ci = bootstrap_ci(darr_kendall_tau, ([3, 2, 1, 5] * 5, [1, 2, 4, 0] * 5), n_samples=200, seed=1)
        >>> ci.value, ci.low < 0 < ci.high
        (0.0, True)
    """
    arrays, n = _as_items(data)
    rng = np.random.default_rng(seed)
    samples = [_evaluate(statistic, arrays, rng.integers(n, size=n)) for _ in range(n_samples)]
    return Interval(_evaluate(statistic, arrays), *percentile_interval(samples, alpha))


@dataclass(frozen=True)
class PairedBootstrap:
    """Koehn (2004) paired bootstrap between metrics A and B on the same items."""

    value_a: float
    value_b: float
    wins_a: int
    wins_b: int
    n_samples: int

    @property
    def p_value(self) -> float:
        """One-sided p of "A is better than B": share of resamples where A did not win."""
        return 1.0 - self.wins_a / self.n_samples


def paired_bootstrap(
    statistic: Statistic,
    data_a: Sequence[np.ndarray],
    data_b: Sequence[np.ndarray],
    n_samples: int = 1000,
    seed: int = DEFAULT_SEED,
) -> PairedBootstrap:
    """Resample items with replacement and count how often ``statistic`` favours A or B.

    A is significantly better at the 95% level when it wins at least 95% of resamples
    (``p_value < 0.05``; WMT18 findings Fig. 3, Koehn 2004).

    Args:
        statistic: the statistic both metrics are compared on, called with the arrays of
            ``data_a`` (then of ``data_b``) picked at one resample's indices.
        data_a: metric A's arrays over the items (e.g. ``(better_a, worse_a)`` for daRR tau).
        data_b: metric B's arrays over the same items, in the same order; each resample uses one
            index set for both, so the comparison is paired.
        n_samples: the number of bootstrap resamples.
        seed: the seed of numpy's generator (sacreBLEU's default).

    Returns:
        Both statistics on the full data, the resamples each metric won (ties count for
        neither) and ``p_value``, the one-sided p of "A is better than B".

    Raises:
        ArgumentError: the arrays differ in length (within or across ``data_a`` and ``data_b``),
            hold fewer than 2 items, or the statistic returns NaN.

    Example:
        >>> from nlgscore.meta.stats.wmt import darr_kendall_tau
        >>> r = paired_bootstrap(darr_kendall_tau, ([2] * 20, [1] * 20), ([1, 2] * 10, [2, 1] * 10), 100)
        >>> r.value_a, r.value_b, r.p_value
        (1.0, 0.0, 0.0)
    """
    arrays_a, n = _as_items(data_a)
    arrays_b, n_b = _as_items(data_b)
    if n != n_b:
        raise ArgumentError(f"data_a and data_b hold different numbers of items: {n} != {n_b}")
    rng = np.random.default_rng(seed)
    wins_a = wins_b = 0
    for _ in range(n_samples):
        index = rng.integers(n, size=n)
        a, b = _evaluate(statistic, arrays_a, index), _evaluate(statistic, arrays_b, index)
        wins_a += a > b
        wins_b += b > a
    return PairedBootstrap(_evaluate(statistic, arrays_a), _evaluate(statistic, arrays_b), wins_a, wins_b, n_samples)


@dataclass(frozen=True)
class SubsetSignificance:
    """BARTScore-style significance: wins of A over B on random subsets."""

    wins_a: int
    n_iterations: int
    threshold: int

    @property
    def verdict(self) -> str:
        """``"a"`` if A wins more than ``threshold``, ``"b"`` if it wins fewer than
        ``n_iterations - threshold``, else ``"none"``."""
        if self.wins_a > self.threshold:
            return "a"
        if self.wins_a < self.n_iterations - self.threshold:
            return "b"
        return "none"


def subset_significance(
    statistic: Statistic,
    data_a: Sequence[np.ndarray],
    data_b: Sequence[np.ndarray],
    n_iterations: int = 1000,
    fraction: float = 0.8,
    threshold: int = 950,
    seed: int = 666,
) -> SubsetSignificance:
    """BARTScore's significance test (Yuan et al. 2021, Sec. 5; their ``sig_test_two``).

    Each iteration shuffles the items and keeps the first ``fraction`` of them, without
    replacement, and counts a win for A when its statistic is strictly higher than B's.

    Args:
        statistic: the statistic both metrics are compared on, called with one subset of the
            arrays of ``data_a`` (then of ``data_b``).
        data_a: metric A's arrays over the items.
        data_b: metric B's arrays over the same items, in the same order (one subset serves both).
        n_iterations: the number of random subsets (1000, as BARTScore).
        fraction: the share of the items each subset keeps, in (0, 1] (0.8, as BARTScore).
        threshold: A is significantly better when it wins more than ``threshold`` subsets (950),
            significantly worse when it wins fewer than ``n_iterations - threshold``.
        seed: the seed of numpy's generator (666, BARTScore's).

    Returns:
        A's wins with ``verdict``: ``"a"``, ``"b"`` or ``"none"``.

    Raises:
        ArgumentError: the arrays differ in length, hold fewer than 2 items, ``fraction`` is
            outside (0, 1], or the statistic returns NaN.

    Example:
        >>> from nlgscore.meta.stats.wmt import darr_kendall_tau
        >>> subset_significance(darr_kendall_tau, ([2, 2, 2, 2, 2], [1] * 5), ([1, 2, 1, 2, 1], [2] * 5)).verdict
        'a'
    """
    arrays_a, n = _as_items(data_a)
    arrays_b, n_b = _as_items(data_b)
    if n != n_b:
        raise ArgumentError(f"data_a and data_b hold different numbers of items: {n} != {n_b}")
    if not 0 < fraction <= 1:
        raise ArgumentError(f"fraction must be in (0, 1], got {fraction}")
    keep = max(1, int(n * fraction))
    rng = np.random.default_rng(seed)
    wins = 0
    for _ in range(n_iterations):
        index = rng.permutation(n)[:keep]
        wins += _evaluate(statistic, arrays_a, index) > _evaluate(statistic, arrays_b, index)
    return SubsetSignificance(int(wins), n_iterations, threshold)


@dataclass(frozen=True)
class SystemComparison:
    """One system's segment-mean score, its bootstrap 95% CI and p against the baseline.

    ``p_value`` is None for the baseline itself.
    """

    score: float
    mean: float
    ci_low: float
    ci_high: float
    p_value: Optional[float]


def _system_matrix(baseline: ArrayLike, systems: Sequence[ArrayLike]) -> np.ndarray:
    rows = [as_finite_array(baseline, "baseline")]
    rows += [as_finite_array(s, f"system {i + 1}") for i, s in enumerate(systems)]
    lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        raise ArgumentError(
            f"systems must have one score per segment of the same test set, got lengths {[len(r) for r in rows]}"
        )
    if len(rows[0]) < 2:
        raise ArgumentError("system comparison needs at least 2 segments")
    return np.vstack(rows)


def _p_value(null_statistics: np.ndarray, observed: float) -> float:
    # (count + 1) / (N + 1) as in sacreBLEU/multeval (Clark et al. 2011). sacreBLEU counts
    # strictly larger values, which gives identical systems p = 1/(N+1); counting values at
    # least as extreme (Noreen 1989) gives them p = 1, the conservative answer.
    tolerance = _RELATIVE_TOLERANCE * max(1.0, abs(observed))
    count = int(np.sum(null_statistics >= observed - tolerance))
    return (count + 1) / (len(null_statistics) + 1)


def _bootstrap_means(scores: np.ndarray, index: np.ndarray) -> np.ndarray:
    # (systems, resamples): each resample's mean segment score.
    return np.stack([row[index].mean(axis=1) for row in scores])


def _comparisons(
    scores: np.ndarray, resampled: np.ndarray, p_values: Sequence[Optional[float]]
) -> list[SystemComparison]:
    results = []
    for row, means, p in zip(scores, resampled, p_values):
        low, high = percentile_interval(means)
        results.append(SystemComparison(float(row.mean()), float(means.mean()), low, high, p))
    return results


def compare_systems_bootstrap(
    baseline: ArrayLike,
    systems: Sequence[ArrayLike],
    n_samples: int = 1000,
    seed: int = DEFAULT_SEED,
) -> list[SystemComparison]:
    """Paired bootstrap resampling of systems against a baseline, like ``sacrebleu --paired-bs``.

    One set of ``n_samples`` resampled segment indices serves all systems (Koehn 2004). Each
    system gets the mean of its resampled scores with a 95% percentile CI, and a two-sided
    p-value: the resampled absolute differences to the baseline, centred on their mean (the null
    hypothesis of no difference), are compared with the observed absolute difference, counting
    ``(as extreme + 1) / (n_samples + 1)``.

    Args:
        baseline: the baseline system's score of each segment (its system score is their mean).
        systems: each other system's segment scores, over the same segments in the same order.
        n_samples: the number of bootstrap resamples.
        seed: the seed of numpy's generator (sacreBLEU's default).

    Returns:
        One comparison per system, the baseline first (``p_value=None``), then ``systems`` in order.

    Raises:
        ArgumentError: a system has another number of segments, fewer than 2 segments, or a NaN
            or infinite score.

    Example:
        >>> res = compare_systems_bootstrap([0.1, 0.5, 0.3, 0.2], [[0.1, 0.5, 0.3, 0.2]], 100)
        >>> res[1].p_value
        1.0
    """
    scores = _system_matrix(baseline, systems)
    n = scores.shape[1]
    index = np.random.default_rng(seed).integers(n, size=(n_samples, n))
    resampled = _bootstrap_means(scores, index)
    p_values: list[Optional[float]] = [None]
    for row, means in zip(scores[1:], resampled[1:]):
        sample_diffs = np.abs(means - resampled[0])
        p_values.append(_p_value(sample_diffs - sample_diffs.mean(), abs(row.mean() - scores[0].mean())))
    return _comparisons(scores, resampled, p_values)


def compare_systems_randomization(
    baseline: ArrayLike,
    systems: Sequence[ArrayLike],
    n_trials: int = 10_000,
    seed: int = DEFAULT_SEED,
    n_confidence: int = 1000,
    chunk: int = 1000,
) -> list[SystemComparison]:
    """Paired approximate randomization test against a baseline, like ``sacrebleu --paired-ar``.

    Each trial swaps the two systems' outputs on a random half of the segments (a fair coin
    per segment, the same swaps for every system) and measures the absolute difference of
    the two pseudo-systems' mean scores; the two-sided p-value is the share of trials at
    least as different as the observed pair (Riezler and Maxwell 2005).

    Args:
        baseline: the baseline system's score of each segment.
        systems: each other system's segment scores, over the same segments in the same order.
        n_trials: the number of random swaps (10,000, as sacreBLEU's ``--paired-ar-trials``).
        seed: the seed of numpy's generator (sacreBLEU's default).
        n_confidence: the bootstrap resamples behind each system's mean and 95% CI, as
            ``--paired-ar-confidence`` does.
        chunk: the trials multiplied out at once; it bounds memory to ``chunk`` by segments
            floats.

    Returns:
        As `compare_systems_bootstrap`: the baseline first, then ``systems`` in order.

    Raises:
        ArgumentError: as `compare_systems_bootstrap`.

    Example:
        >>> res = compare_systems_randomization([0.1, 0.5, 0.3, 0.2], [[0.9, 0.9, 0.8, 0.7]], 4000)
        >>> round(res[1].p_value, 2)  # 4 segments: 2 of the 16 swap patterns reach the observed gap
        0.12
    """
    scores = _system_matrix(baseline, systems)
    n = scores.shape[1]
    rng = np.random.default_rng(seed)
    # Mean(a') - mean(b') after swapping is sum(sign_i * (a_i - b_i)) / n with sign = +-1.
    signs = np.where(rng.integers(2, size=(n_trials, n), dtype=bool), 1.0, -1.0)
    p_values: list[Optional[float]] = [None]
    for row in scores[1:]:
        delta = scores[0] - row
        trial_diffs = np.concatenate([np.abs(signs[i : i + chunk] @ delta) / n for i in range(0, n_trials, chunk)])
        p_values.append(_p_value(trial_diffs, abs(delta.sum()) / n))
    index = rng.integers(n, size=(n_confidence, n))
    return _comparisons(scores, _bootstrap_means(scores, index), p_values)
