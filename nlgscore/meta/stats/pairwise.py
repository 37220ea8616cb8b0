"""The WMT22-25 pairwise statistics (mt-metrics-eval ``stats.py``, ``pce.py``, ``tau_optimization.py``).

* system: ``pairwise_accuracy`` (Kocmi et al. 2021; WMT22/23), ``soft_pairwise_accuracy`` (SPA =
  1 - PCE, Thompson et al. 2024; WMT24/25; ``permutation_signs``, ``pairwise_p_values`` and
  ``spa_from_p_values`` its parts, as ``pce.py``);
* segment: ``acc_eq`` (Deutsch et al. 2023) and ``acc_t`` (acc_eq item-grouped at the tie threshold
  ``tie_calibration`` picks; WMT23-25, ``KendallWithTiesOpt(variant="acc23", sample_rate=1.0)``),
  over the ``item_pairs`` of ``(systems, items)`` matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

from nlgscore.errors import ArgumentError
from nlgscore.meta.stats.correlation import _matrices

# pce.compute_pairwise_p_values' defaults: 1000 paired permutations, seed 4.
PCE_PERMUTATIONS = 1000
PCE_SEED = 4


def pairwise_accuracy(human: ArrayLike, metric: ArrayLike) -> float:
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
    float32 arithmetic as pce.py, so values equal mt-metrics-eval's; the matrix is made C-contiguous
    as pce.py receives it (a column selection is not), since the memory layout changes float32
    summation order, and with it which permutations tie the observed difference.
    """
    seg = np.ascontiguousarray(segments, dtype=np.float32)
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


def _pdp_differences(human: np.ndarray, metric: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The intra-item differences PDP correlates: human and metric, pairs with a missing human score left out."""
    human, metric = _matrices(human, metric)
    human_diffs = (human.T[:, None, :] - human.T[:, :, None]).reshape(-1)
    metric_diffs = (metric.T[:, None, :] - metric.T[:, :, None]).reshape(-1)
    kept = ~np.isnan(human_diffs)
    return human_diffs[kept], metric_diffs[kept]


def pdp_undefined(human: np.ndarray, metric: np.ndarray) -> Optional[str]:
    """Why :func:`pairwise_difference_pearson` has no value for these scores, or None when it has one.

    ``"human"``: the human scores are constant within every item (every rated system has the same
    score on an item), so every human difference is 0; ``"metric"``: the same of the metric's
    scores; ``"pairs"``: fewer than two rated pairs.

    >>> pdp_undefined(np.array([[3.0, 1.0], [3.0, 1.0]]), np.array([[0.1, 0.9], [0.3, 0.5]]))
    'human'
    >>> pdp_undefined(np.array([[1.0, 5.0], [2.0, 3.0]]), np.array([[0.1, 0.9], [0.3, 0.5]])) is None
    True
    """
    return _constant_side(*_pdp_differences(human, metric))


def _constant_side(h: np.ndarray, m: np.ndarray) -> Optional[str]:
    if h.size < 2:
        return "pairs"
    if np.all(h == h[0]):
        return "human"
    if np.all(m == m[0]):
        return "metric"
    return None


def pairwise_difference_pearson(human: np.ndarray, metric: np.ndarray) -> float:
    """Pairwise Difference Pearson (PDP; mt-metrics-eval ``Correlation.Pearson(average_by="item", pdp=True)``).

    Per item, every ordered pair of systems (a, b), a == b included, gives the human difference
    ``h[b] - h[a]`` and the metric's ``m[b] - m[a]``; pairs with a missing human score are left
    out and one Pearson correlation is taken over all of them. Unlike a per-item Pearson, it keeps
    the size of the differences between items.

    Undefined (NaN) when either side is constant (:func:`pdp_undefined` says which), e.g. human
    scores that never differ within an item. This follows mt-metrics-eval's rule for an undefined
    correlation: ``AverageCorrelation.Corr`` sets a Pearson correlation with a constant side to NaN
    (its ``is_constant_array`` check, whatever scipy returns) and leaves it out. Where that leaves
    nothing, mtme returns ``(0, 0, 0)``, a 0 told apart from a real one only by its denominator of
    0; a table row has no denominator, so the value stays NaN here and the tasks report it as
    undefined (``n/a``, with a note naming the data set) rather than as a correlation of 0.

    >>> human = np.array([[1.0, 5.0], [2.0, np.nan], [4.0, 3.0]])
    >>> round(pairwise_difference_pearson(human, np.array([[0.1, 0.9], [0.3, 0.5], [0.6, 0.2]])), 6)
    0.934988
    """
    h, m = _pdp_differences(human, metric)
    if _constant_side(h, m) is not None:
        return float("nan")
    return float(scipy_stats.pearsonr(h, m)[0])
