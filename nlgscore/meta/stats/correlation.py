"""Correlations between human and metric scores (one definition each).

* ``pearson``: the checked Pearson r every meta-evaluation module shares (errors on constant or
  non-finite input; WMT18 findings Eq. 2); ``as_finite_array`` its input check.
* ``CORRELATIONS`` / ``correlation``: mt-metrics-eval's segment-level correlations over the rated
  cells of ``(systems, items)`` matrices: no grouping (``average_by="none"``) or item-grouped
  (``average_by="item"``); NaN, not an error, for a constant vector (``stats.py`` Correlation).
  ``CORRELATIONS`` is the one table of correlations by name: ``pearson``, ``kendall`` (tau-b),
  ``spearman``.
"""

from __future__ import annotations

from typing import Callable, Dict, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

from nlgscore.errors import ArgumentError


def _matrices(human: np.ndarray, metric: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    human, metric = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    if human.shape != metric.shape or human.ndim != 2:
        raise ArgumentError(
            f"human and metric must be (systems, items) arrays of one shape, got {human.shape} and {metric.shape}"
        )
    if not np.all(np.isfinite(metric[~np.isnan(human)])):
        raise ArgumentError("metric scores must be finite wherever there is a human score")
    return human, metric


def as_finite_array(values: ArrayLike, name: str) -> np.ndarray:
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


def pearson(human: ArrayLike, metric: ArrayLike, min_items: int = 3) -> float:
    """Pearson r between human and metric scores (WMT18 findings Eq. 2).

    Args:
        human: the human score of each item (system, segment).
        metric: the metric score of the same items.
        min_items: the fewest items that make a correlation (3: system-level meta-evaluation
            needs at least 3 systems).

    Returns:
        The correlation, in [-1, 1].

    Raises:
        ArgumentError: the scores differ in length, hold fewer than ``min_items`` items or a NaN
            or infinite value, or a side is constant (no correlation, rather than a NaN).

    Example:
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


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rho (scipy's; NaN when either side is constant, without its warning)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(scipy_stats.spearmanr(x, y).statistic)


# The one table of correlations by name (every task and measure reads it; NaN for a constant side).
CORRELATIONS: Dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "pearson": _pearson,
    "kendall": _kendall,
    "spearman": _spearman,
}


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
    if method not in CORRELATIONS:
        raise ArgumentError(f"method must be one of {', '.join(CORRELATIONS)}, got {method!r}")
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
