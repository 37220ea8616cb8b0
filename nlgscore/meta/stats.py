"""The WMT22-25 metrics-task statistics as small pure functions over numpy arrays.

Definitions follow the WMT metrics-task findings and google-research/mt-metrics-eval (read for
the facts, not copied): ``stats.py`` (Agreement, KendallVariants, KendallWithTiesOpt,
PermutationSigDiff, PairwisePermutationSigDiff), ``tau_optimization.py``, ``pce.py`` and
``data.py`` (CompareMetricsWithGlobalAccuracy, AssignRanks).

Segment-level inputs are ``(systems, items)`` matrices: ``human`` has NaN where a (system, item)
was not rated; ``metric`` must be finite where ``human`` is rated. System-level inputs are one
value per system. Measure names as in nlgscore's tables:

* system: ``pearson``, ``accuracy`` (pairwise accuracy, Kocmi et al. 2021; WMT22/23),
  ``spa`` (soft pairwise accuracy = 1 - pairwise confidence error, Thompson et al. 2024; WMT24/25);
* segment: ``pearson`` / ``kendall`` (no grouping: all rated items in one vector), ``pearson-item``
  / ``kendall-item`` (per item across systems, then averaged), ``acc-t`` (acc_eq item-grouped
  with the tie threshold calibrated, Deutsch et al. 2023; WMT23-25) and ``acc-t-epsilon``.

Also the checked Pearson r every meta-evaluation module shares (``pearson``: errors on constant
input; WMT18 findings Eq. 2). The WMT17-21 daRR statistics and the Williams test are in ``wmt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Sequence, Tuple

import numpy as np
from scipy import stats as scipy_stats

from nlgscore.core.errors import ArgumentError

# pce.compute_pairwise_p_values' defaults: 1000 paired permutations, seed 4.
PCE_PERMUTATIONS = 1000
PCE_SEED = 4
# mt-metrics-eval Task defaults for the significance of metric differences.
SIG_RESAMPLES = 1000
SIG_BLOCK = 100
SIG_EARLY_MIN, SIG_EARLY_MAX = 0.02, 0.50
SIG_LEVEL = 0.05


def _matrices(human: np.ndarray, metric: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    human, metric = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    if human.shape != metric.shape or human.ndim != 2:
        raise ArgumentError(f"human and metric must be (systems, items) arrays of one shape, got {human.shape} and {metric.shape}")
    if not np.all(np.isfinite(metric[~np.isnan(human)])):
        raise ArgumentError("metric scores must be finite wherever there is a human score")
    return human, metric


def as_finite_array(values: Iterable[float], name: str) -> np.ndarray:
    """``values`` as a 1-D float array; ValueError naming ``name`` if empty or not finite.

    >>> as_finite_array([1, 2.5], "scores")
    array([1. , 2.5])
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ArgumentError(f"{name} must be a non-empty 1-D sequence of numbers")
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ArgumentError(f"{name} has a NaN or infinite value at index {bad}")
    return array


def pearson(human: Sequence[float], metric: Sequence[float], min_items: int = 3) -> float:
    """Pearson r between human and metric scores (WMT18 findings Eq. 2).

    System-level meta-evaluation needs at least ``min_items`` (3) systems; constant inputs
    have no correlation and raise ValueError rather than returning NaN.

    >>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 6)
    0.964764
    """
    human_arr = as_finite_array(human, "human")
    metric_arr = as_finite_array(metric, "metric")
    if human_arr.shape != metric_arr.shape:
        raise ArgumentError(f"human and metric differ in length: {human_arr.size} != {metric_arr.size}")
    if human_arr.size < min_items:
        raise ArgumentError(f"Pearson correlation needs at least {min_items} items, got {human_arr.size}")
    for name, values in (("human", human_arr), ("metric", metric_arr)):
        if np.ptp(values) == 0:
            raise ArgumentError(f"{name} scores are all equal: the correlation is undefined")
    h = human_arr - human_arr.mean()
    m = metric_arr - metric_arr.mean()
    return float(np.dot(h, m) / np.sqrt(np.dot(h, h) * np.dot(m, m)))


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r; NaN when either side is constant (as scipy.stats.pearsonr, without its warning)."""
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt(np.dot(x, x) * np.dot(y, y))
    return float(np.dot(x, y) / denominator) if denominator > 0 else float("nan")


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall tau-b (scipy's default variant; NaN when either side is constant)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(scipy_stats.kendalltau(x, y).statistic)


CORRELATIONS: Dict[str, Callable[[np.ndarray, np.ndarray], float]] = {"pearson": _pearson, "kendall": _kendall}


def correlation(human: np.ndarray, metric: np.ndarray, method: str = "pearson", by_item: bool = False) -> float:
    """Segment-level correlation over the rated (system, item) cells.

    No grouping (``by_item=False``, mtme ``average_by="none"``): one correlation over every rated
    cell. Item-grouped (mtme ``average_by="item"``): per item, the correlation across the systems
    that rated it (items with fewer than 2 are skipped), then the plain mean of those that are
    defined (constant vectors give NaN and are left out, ``replace_nans_with_zeros=False``).

    >>> h = np.array([[1.0, 2, np.nan], [2, 1, 3], [3, 3, 1]])
    >>> m = np.array([[0.1, 0.5, 9], [0.2, 0.1, 0.3], [0.3, 0.2, 0.1]])
    >>> round(correlation(h, m), 4), round(correlation(h, m, "kendall", by_item=True), 4)
    (0.5556, 0.7778)
    """
    human, metric = _matrices(human, metric)
    correlate = CORRELATIONS[method]
    if not by_item:
        rated = ~np.isnan(human)
        return correlate(human[rated], metric[rated])
    values = []
    for column in range(human.shape[1]):
        rated = ~np.isnan(human[:, column])
        if rated.sum() >= 2:
            values.append(correlate(human[rated, column], metric[rated, column]))
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else float("nan")


def pairwise_accuracy(human: Sequence[float], metric: Sequence[float]) -> float:
    """System-level pairwise accuracy (Kocmi et al. 2021; mtme ``Agreement``).

    Over every pair of systems: agreement when sign(human difference) == sign(metric
    difference). A pair tied by both counts as agreement, a pair tied by one only as disagreement.

    >>> pairwise_accuracy([1, 2, 3], [10, 30, 20])  # 2 of 3 pairs ordered alike
    0.6666666666666666
    """
    h, m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    if h.shape != m.shape or h.size < 2:
        raise ArgumentError("pairwise accuracy needs at least 2 systems with a human and a metric score")
    i, j = np.triu_indices(h.size, 1)
    return float(np.mean(np.sign(h[i] - h[j]) == np.sign(m[i] - m[j])))


def permutation_signs(n_segments: int, permutations: int = PCE_PERMUTATIONS, seed: int = PCE_SEED) -> np.ndarray:
    """The ``(permutations, segments)`` matrix of +-1 swap signs of the paired permutation test.

    As pce.py draws them: uniform [0, 1) float32 numbers from ``numpy.random.default_rng(seed)``,
    rounded to 0/1, mapped to -1/+1 (one matrix shared by every system pair).
    """
    draws = np.random.default_rng(seed).random(size=(permutations, n_segments), dtype=np.float32)
    return np.rint(draws) * 2.0 - 1.0


def pairwise_p_values(segments: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """p-value of "system i is better than system j" for every i < j (NaN elsewhere).

    Paired permutation test on system sums (pce.py): under the null each segment's two scores are
    swapped at random; p = share of permutations whose difference is >= the observed one.
    float32 arithmetic as pce.py, so values equal mt-metrics-eval's.
    """
    seg = np.asarray(segments, dtype=np.float32)
    totals = seg.sum(axis=1)
    partial = np.asarray(signs, dtype=np.float32) @ seg.T  # (permutations, systems)
    # every pair at once: null[k, a, b] = partial[k, a] - partial[k, b], against totals[a] - totals[b]
    null = partial[:, :, None] - partial[:, None, :]
    p = np.count_nonzero(null >= (totals[:, None] - totals[None, :]), axis=0) / signs.shape[0]
    p[np.tril_indices(seg.shape[0])] = np.nan
    return p


def soft_pairwise_accuracy(human: np.ndarray, metric: np.ndarray, signs: np.ndarray) -> float:
    """SPA = 1 - PCE (Thompson et al. 2024; WMT24/25 system level).

    ``human`` and ``metric`` are ``(systems, segments)`` over the segments every system was rated
    on; PCE is the mean over system pairs of |p_human - p_metric| (``pairwise_p_values``, the same
    ``signs`` for both). SPA is 1 when the metric is as confident as humans about every pair.

    >>> h = np.array([[3.0, 4, 5, 4], [1, 2, 1, 2], [0, 0, 1, 0]])
    >>> soft_pairwise_accuracy(h, 10 * h + 1, permutation_signs(4, 200))
    1.0
    """
    return spa_from_p_values(pairwise_p_values(human, signs), pairwise_p_values(metric, signs))


def spa_from_p_values(p_human: np.ndarray, p_metric: np.ndarray) -> float:
    """1 - mean over system pairs (upper triangle) of |p_human - p_metric| (pce.compute_one_minus_pce)."""
    upper = np.triu_indices(p_human.shape[0], 1)
    return float(1.0 - np.mean(np.abs(p_human - p_metric)[upper]))


@dataclass(frozen=True)
class ItemPairs:
    """Every pair of systems rated on the same item: what acc_eq needs (mtme tau_optimization)."""

    human_sign: np.ndarray  # sign of the human difference
    metric_diff: np.ndarray  # metric difference, same orientation
    item: np.ndarray  # which item (0..items with a pair - 1) the pair belongs to
    weight: np.ndarray  # 1 / (items with a pair * pairs of this pair's item): acc is a mean of item means

    def accuracy(self, outcomes: np.ndarray) -> float:
        """The mean over items of each item's share of counted pairs."""
        per_item = np.bincount(self.item, outcomes) / np.bincount(self.item)
        return float(per_item.mean())


def item_pairs(human: np.ndarray, metric: np.ndarray) -> ItemPairs:
    """The system pairs of each item (rated systems only); items with one rating add nothing."""
    human, metric = _matrices(human, metric)
    signs, diffs, counts = [], [], []
    for column in range(human.shape[1]):
        rated = np.flatnonzero(~np.isnan(human[:, column]))
        if rated.size < 2:
            continue
        i, j = (rated[k] for k in np.triu_indices(rated.size, 1))
        signs.append(np.sign(human[i, column] - human[j, column]))
        diffs.append(metric[i, column] - metric[j, column])
        counts.append(np.full(i.size, i.size))
    if not signs:
        raise ArgumentError("no item was rated for two systems: acc_eq is undefined")
    item = np.concatenate([np.full(c.size, k) for k, c in enumerate(counts)])
    weight = 1.0 / (np.concatenate(counts) * len(counts))
    return ItemPairs(np.concatenate(signs), np.concatenate(diffs), item, weight)


def pair_outcomes(pairs: ItemPairs, epsilon: float) -> np.ndarray:
    """1 where the pair counts for acc_eq at ``epsilon``: metric tie (|diff| <= eps) with a human
    tie, or no metric tie and the same order as humans; 0 otherwise (mtme ``acc_23``)."""
    tied = np.abs(pairs.metric_diff) <= epsilon
    agree = (np.sign(pairs.metric_diff) == pairs.human_sign) & (pairs.human_sign != 0)
    return np.where(tied, pairs.human_sign == 0, agree).astype(float)


def acc_eq(human: np.ndarray, metric: np.ndarray, epsilon: float = 0.0) -> float:
    """Item-grouped pairwise accuracy with ties (acc_eq, Deutsch et al. 2023) at a fixed ``epsilon``.

    >>> acc_eq(np.array([[1.0], [1.0], [2.0]]), np.array([[0.5], [0.6], [0.9]]), epsilon=0.1)
    1.0
    """
    if epsilon < 0:
        raise ArgumentError(f"epsilon must be >= 0, got {epsilon}")
    pairs = item_pairs(human, metric)
    return pairs.accuracy(pair_outcomes(pairs, epsilon))


def tie_calibration(pairs: ItemPairs) -> Tuple[float, float]:
    """``(best acc_eq, its epsilon)`` over the candidate thresholds (mtme ``tau_optimization``).

    Candidates are 0 and every distinct |metric difference| of a pair (sample rate 1.0, as the
    WMT23/24 acc-t tasks); the smallest epsilon among equal maxima wins (``nanargmax``).
    """
    gaps = np.abs(pairs.metric_diff)
    base = pair_outcomes(pairs, -1.0) * pairs.weight  # no pair tied (0-gap pairs are handled by the gain)
    gain = (pair_outcomes(pairs, np.inf) * pairs.weight) - base  # change when the pair becomes a tie
    order = np.argsort(gaps, kind="stable")
    gaps, totals = gaps[order], base.sum() + np.cumsum(gain[order])
    last = np.r_[gaps[1:] != gaps[:-1], True]  # a threshold ties every pair with that gap
    thresholds, values = gaps[last], totals[last]
    if thresholds[0] > 0:
        thresholds, values = np.r_[0.0, thresholds], np.r_[base.sum(), values]
    best = float(thresholds[int(np.argmax(values))])
    return pairs.accuracy(pair_outcomes(pairs, best)), best  # exact item means, not the running sum


def acc_t(human: np.ndarray, metric: np.ndarray) -> Tuple[float, float]:
    """acc-t: ``(acc_eq item-grouped at the calibrated epsilon, epsilon)``; WMT23-25 segment level.

    >>> human = np.array([[1.0, 3], [1.0, 2], [2.0, 1]])
    >>> metric = np.array([[0.50, 0.9], [0.52, 0.8], [0.90, 0.1]])
    >>> acc_t(human, metric)  # tying 0.50 and 0.52 gets item 1 right too
    (1.0, 0.020000000000000018)
    """
    return tie_calibration(item_pairs(human, metric))


def _zscore(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else values - values.mean()


def permutation_test(
    statistic: Callable[[np.ndarray], float], metric_a: np.ndarray, metric_b: np.ndarray, mask: np.ndarray,
    resamples: int = SIG_RESAMPLES, seed: int = 0,
) -> float:
    """p-value that metric A's ``statistic`` beats B's only by chance (PERM-BOTH, Deutsch et al. 2021).

    mtme ``PermutationSigDiff``: both metrics' scores are z-scored over the ``mask`` cells, each
    cell's two scores are swapped with probability 1/2, and p = share of resamples whose A - B
    difference is >= the observed one; early stop every 100 resamples when p < 0.02 or p > 0.5.
    """
    a = np.array(metric_a, dtype=float)
    b = np.array(metric_b, dtype=float)
    a[mask], b[mask] = _zscore(a[mask]), _zscore(b[mask])
    observed = statistic(a) - statistic(b)
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    for done in range(1, resamples + 1):
        swap = rng.integers(0, 2, size=a.shape).astype(bool)
        if statistic(np.where(swap, b, a)) - statistic(np.where(swap, a, b)) >= observed:
            hits += 1
        if done % SIG_BLOCK == 0 and not SIG_EARLY_MIN <= hits / done <= SIG_EARLY_MAX:
            break
    return hits / max(done, 1)


def pairs_permutation_test(outcomes_a: np.ndarray, outcomes_b: np.ndarray, weight: np.ndarray,
                           resamples: int = SIG_RESAMPLES, seed: int = 0) -> float:
    """p-value for acc-t: A's pairwise outcomes (at A's epsilon) against B's (at B's), swapped pair by
    pair (mtme ``PairwisePermutationSigDiff``, the WMT23/24 acc-t test), same early stopping."""
    difference = weight * (outcomes_a - outcomes_b)
    observed = difference.sum()
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    for done in range(1, resamples + 1):
        flip = rng.integers(0, 2, size=difference.size) * 2 - 1
        if np.dot(flip, difference) >= observed:
            hits += 1
        if done % SIG_BLOCK == 0 and not SIG_EARLY_MIN <= hits / done <= SIG_EARLY_MAX:
            break
    return hits / max(done, 1)


def cluster_ranks(p_values: np.ndarray, alpha: float = SIG_LEVEL) -> List[int]:
    """Significance-cluster ranks of metrics sorted best first (mtme ``AssignRanks``; WMT's ranking).

    ``p_values[i, j]`` (i < j) is the p-value that metric i beats metric j by chance. A new rank
    starts at metric i when some metric of the current cluster significantly beats it.

    >>> cluster_ranks(np.array([[0, 0.3, 0.01], [0, 0, 0.2], [0, 0, 0]]))
    [1, 1, 2]
    """
    ranks, rank, start = [], 1, 0
    for i in range(len(p_values)):
        if np.any(p_values[start:i, i] <= alpha):
            rank, start = rank + 1, i
        ranks.append(rank)
    return ranks
