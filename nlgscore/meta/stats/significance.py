"""Significance of the difference between two metrics, and WMT's significance clusters.

mt-metrics-eval ``stats.py`` (``PermutationSigDiff``: PERM-BOTH, Deutsch et al. 2021;
``PairwisePermutationSigDiff``: the WMT23/24 acc-t test) and ``data.py`` (``AssignRanks``).
"""

from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

# mt-metrics-eval Task defaults for the significance of metric differences.
SIG_RESAMPLES = 1000
SIG_BLOCK = 100
SIG_EARLY_MIN, SIG_EARLY_MAX = 0.02, 0.50
SIG_LEVEL = 0.05


def _zscore(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else values - values.mean()


def permutation_test(
    statistic: Callable[[np.ndarray], float],
    metric_a: np.ndarray,
    metric_b: np.ndarray,
    mask: np.ndarray,
    resamples: int = SIG_RESAMPLES,
    seed: int = 0,
    draws: Optional[List[float]] = None,
) -> float:
    """p-value that metric A's ``statistic`` beats B's only by chance (PERM-BOTH, Deutsch et al. 2021).

    mtme ``PermutationSigDiff``: both metrics' scores are z-scored over the ``mask`` cells, each
    cell's two scores are swapped with probability 1/2, and p = share of resamples whose A - B
    difference is >= the observed one; early stop every 100 resamples when p < 0.02 or p > 0.5.
    ``draws``, when given, receives each resample's A - B difference (mtme's draws, which the
    significance of an average over tasks reuses: ``nlgscore.meta.stats.avg_corr``).
    """
    a = np.array(metric_a, dtype=float)
    b = np.array(metric_b, dtype=float)
    a[mask], b[mask] = _zscore(a[mask]), _zscore(b[mask])
    observed = statistic(a) - statistic(b)
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    for done in range(1, resamples + 1):
        swap = rng.integers(0, 2, size=a.shape).astype(bool)
        resampled = statistic(np.where(swap, b, a)) - statistic(np.where(swap, a, b))
        if draws is not None:
            draws.append(float(resampled))
        if resampled >= observed:
            hits += 1
        if done % SIG_BLOCK == 0 and not SIG_EARLY_MIN <= hits / done <= SIG_EARLY_MAX:
            break
    return hits / max(done, 1)


def pairs_permutation_test(
    outcomes_a: np.ndarray,
    outcomes_b: np.ndarray,
    weight: np.ndarray,
    resamples: int = SIG_RESAMPLES,
    seed: int = 0,
    draws: Optional[List[float]] = None,
) -> float:
    """p-value for acc-t: A's pairwise outcomes (at A's epsilon) against B's (at B's), swapped pair by
    pair (mtme ``PairwisePermutationSigDiff``, the WMT23/24 acc-t test), same early stopping;
    ``draws`` as in ``permutation_test``."""
    difference = weight * (outcomes_a - outcomes_b)
    observed = difference.sum()
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    for done in range(1, resamples + 1):
        flip = rng.integers(0, 2, size=difference.size) * 2 - 1
        resampled = np.dot(flip, difference)
        if draws is not None:
            draws.append(float(resampled))
        if resampled >= observed:
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
