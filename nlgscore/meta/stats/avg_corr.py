"""Combining tasks as the WMT24/25 metrics tasks do (mt-metrics-eval ``tasks.TaskSetResults``).

A *task* is one measure on one language pair (SPA at system level, acc-eq at segment level).
``avg_corr`` maps each task's value to [0, 1] by its measure's range (accuracies are in [0, 1],
correlations in [-1, 1]) and takes the weighted mean (``AverageCorrs``); ``average_ranks`` the
weighted mean of each task's significance-cluster rank (``AverageRanks``); ``avg_corr_clusters``
the significance clusters of the averages, from the tasks' permutation draws averaged with the same
weights (``AverageCorrMatrix``: a task whose test stopped early repeats its draws to the longest).

>>> tasks = {"en-cs spa": {"a": 0.9, "b": 0.8}, "en-cs pdp": {"a": 0.5, "b": 0.7}}
>>> avg_corr(tasks, {"en-cs spa": (0, 1), "en-cs pdp": (-1, 1)})
{'a': 0.825, 'b': 0.825}
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from nlgscore.errors import ArgumentError
from nlgscore.meta.stats.significance import SIG_LEVEL, cluster_ranks

Task = str
Draws = Mapping[Tuple[str, str], ArrayLike]  # (metric a, metric b) -> resampled value(a) - value(b)


def _weights(tasks: Sequence[Task], weights: Optional[Mapping[Task, float]]) -> Dict[Task, float]:
    if weights is None:
        return {t: 1.0 / len(tasks) for t in tasks}
    missing = [t for t in tasks if t not in weights]
    if missing:
        raise ArgumentError(f"weights lack task(s) {missing}")
    return {t: float(weights[t]) for t in tasks}


def _common(values: Mapping[Task, Mapping[str, float]]) -> List[str]:
    tasks = list(values)
    if not tasks:
        raise ArgumentError("no task to average")
    return [m for m in values[tasks[0]] if all(m in values[t] for t in tasks)]


def avg_corr(
    values: Mapping[Task, Mapping[str, float]],
    ranges: Mapping[Task, Tuple[float, float]],
    weights: Optional[Mapping[Task, float]] = None,
) -> Dict[str, float]:
    """Per metric present in every task, the weighted mean of its values mapped to [0, 1] by
    each task's ``(low, high)`` range, best first (ties: by name, reversed as mtme's sort keeps
    insertion order; here the name decides, so the order is reproducible)."""
    weight = _weights(list(values), weights)
    out = {
        m: sum(weight[t] * (values[t][m] - ranges[t][0]) / (ranges[t][1] - ranges[t][0]) for t in values)
        for m in _common(values)
    }
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def average_ranks(
    ranks: Mapping[Task, Mapping[str, int]], weights: Optional[Mapping[Task, float]] = None
) -> Dict[str, float]:
    """Per metric present in every task, the weighted mean of its cluster ranks, best (lowest) first.

    >>> average_ranks({"t1": {"a": 1, "b": 2}, "t2": {"a": 2, "b": 1}, "t3": {"a": 1, "b": 1}})
    {'a': 1.3333333333333333, 'b': 1.3333333333333333}
    """
    weight = _weights(list(ranks), weights)
    out = {m: sum(weight[t] * ranks[t][m] for t in ranks) for m in _common(ranks)}
    return dict(sorted(out.items(), key=lambda kv: (kv[1], kv[0])))


def _task_draws(draws: Draws, a: str, b: str) -> np.ndarray:
    if (a, b) in draws:
        return np.asarray(draws[a, b], dtype=float)
    if (b, a) in draws:  # swapping is symmetric: B - A of a resample is -(A - B)
        return -np.asarray(draws[b, a], dtype=float)
    raise ArgumentError(f"no permutation draws for metrics {a!r} and {b!r}")


def avg_corr_clusters(
    averages: Mapping[str, float],
    draws: Mapping[Task, Draws],
    ranges: Mapping[Task, Tuple[float, float]],
    weights: Optional[Mapping[Task, float]] = None,
    alpha: float = SIG_LEVEL,
) -> Tuple[List[int], np.ndarray]:
    """``(cluster ranks, p-value matrix)`` of the metrics of ``averages`` (best first, as ``avg_corr``
    returns them): ``p[i, j]`` is the share of averaged null draws whose difference is >= the
    observed average difference of metrics i and j (mtme ``AverageCorrMatrix``).

    >>> draws = {"t": {("a", "b"): [0.3, -0.2, 0.1, -0.1]}}
    >>> avg_corr_clusters({"a": 0.75, "b": 0.5}, draws, {"t": (0, 1)})[0]
    [1, 1]
    """
    tasks = list(draws)
    weight = _weights(tasks, weights)
    metrics = list(averages)
    p = np.zeros((len(metrics), len(metrics)))
    for i in range(len(metrics)):
        for j in range(i + 1, len(metrics)):
            per_task = [
                weight[t] * _task_draws(draws[t], metrics[i], metrics[j]) / (ranges[t][1] - ranges[t][0]) for t in tasks
            ]
            longest = max(len(d) for d in per_task)
            if longest == 0:
                raise ArgumentError("no permutation draws: run the tasks with resamples > 0")
            null = np.sum([np.tile(d, int(np.ceil(longest / len(d))))[:longest] for d in per_task], axis=0)
            p[i, j] = float(np.mean(null >= averages[metrics[i]] - averages[metrics[j]]))
    return cluster_ranks(p, alpha), p
