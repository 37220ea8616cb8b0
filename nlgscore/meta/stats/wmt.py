"""WMT metrics-task statistics: DARR Kendall's tau-like, Pearson, Williams test, hybrids.

Protocol sources: the WMT18 Metrics Shared Task (Ma, Bojar and Graham 2018) for the
segment-level daRR tau and system-level Pearson/Williams; Graham and Baldwin (2014) for the
Williams test between dependent correlations; Graham and Liu (2016) for hybrid
super-sampling; Zhang et al. (2020, BERTScore) for model selection on hybrids.

Every function takes plain sequences or numpy arrays and returns numbers: scores are
computed elsewhere (``nlgscore.meta.engine``), data are read elsewhere (``loaders``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as scipy_stats

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.stats.correlation import as_finite_array, pearson

# WMT18 daRR keeps a pair only when the raw DA scores differ by more than this (0-100 scale):
# "greater than the 25 percentage point margin" (WMT18 findings, Sec. 3.1).
DARR_MARGIN = 25.0


def darr_concordance(better: ArrayLike, worse: ArrayLike, lower_is_better: bool = False) -> np.ndarray:
    """Per-pair concordance (+1 / -1) of metric scores with daRR better/worse judgments.

    WMT17-19 convention (WMT18 findings Eq. 1 and its concordance table): a pair is
    concordant only when the metric strictly prefers the human-better translation; a metric
    tie counts as discordant. For error metrics (``lower_is_better``) scores are negated.

    >>> darr_concordance([0.9, 0.5, 0.4], [0.1, 0.5, 0.6]).tolist()
    [1, -1, -1]
    """
    return np.where(darr_outcomes(better, worse, lower_is_better) > 0, 1, -1)


def darr_kendall_tau(better: ArrayLike, worse: ArrayLike, lower_is_better: bool = False) -> float:
    """WMT daRR Kendall's tau-like ``(C - D) / (C + D)``, metric ties discordant.

    The WMT17-19 convention (WMT18 findings Sec. 3.1, Eq. 1): a pair is concordant only when
    the metric strictly prefers the translation humans judged better.

    Args:
        better: the metric's score of the human-better translation of each pair.
        worse: the metric's score of the human-worse translation of the same pair.
        lower_is_better: the metric is an error metric (TER): its scores are negated first.

    Returns:
        The tau, in [-1, 1]: the mean of the pairs' +1 (concordant) and -1 (discordant or tied).

    Raises:
        ArgumentError: ``better`` and ``worse`` are empty, differ in length or hold a NaN or
            infinite score.

    Example:
        >>> darr_kendall_tau([3, 2, 1, 5], [1, 2, 4, 0])  # C=2, D=2 (one of them a tie)
        0.0
        >>> darr_kendall_tau([1, 1], [2, 3], lower_is_better=True)
        1.0
    """
    # C + D is the number of pairs, so tau is the mean of +1/-1 concordances.
    return float(np.mean(darr_concordance(better, worse, lower_is_better)))


# How a metric tie on a daRR pair counts: WMT17-19 (and WMT21's DA-to-daRR) count it as
# discordant; "exclude" drops tied pairs from both C and D (WMT14-16).
TIES_RULES = ("discordant", "exclude")


def darr_outcomes(better: ArrayLike, worse: ArrayLike, lower_is_better: bool = False) -> np.ndarray:
    """Per pair: +1 the metric prefers the human-better translation, -1 the other, 0 a tie.

    >>> darr_outcomes([0.9, 0.5, 0.4], [0.1, 0.5, 0.6]).tolist()
    [1, 0, -1]
    """
    better_arr = as_finite_array(better, "better")
    worse_arr = as_finite_array(worse, "worse")
    if better_arr.shape != worse_arr.shape:
        raise ArgumentError(f"better and worse differ in length: {better_arr.size} != {worse_arr.size}")
    sign = -1 if lower_is_better else 1
    return (sign * np.sign(better_arr - worse_arr)).astype(np.int64)


def tau_from_outcomes(outcomes: ArrayLike, ties: str = "discordant") -> float:
    """``(C - D) / (C + D)`` from ``darr_outcomes``; ``ties`` says how a metric tie counts.

    ``"discordant"`` (default, WMT17-19): a tie is a D. ``"exclude"``: tied pairs are left out
    (NaN when every pair is a tie).

    >>> tau_from_outcomes([1, 1, 0, -1]), tau_from_outcomes([1, 1, 0, -1], ties="exclude")
    (0.0, 0.3333333333333333)
    """
    values = np.asarray(outcomes)
    if ties == "discordant":
        return float(np.mean(np.where(values == 0, -1, values)))
    if ties == "exclude":
        kept = values[values != 0]
        return float(np.mean(kept)) if kept.size else float("nan")
    raise ArgumentError(f"ties must be one of {TIES_RULES}, got {ties!r}")


@dataclass(frozen=True)
class DarrPair:
    """One daRR pair: two systems' translations of source ``segment``, ``better`` by DA."""

    # keys as the data name them (a segment index, system names): hashable, typed Any as they index arrays and dicts
    segment: Any
    better: Any
    worse: Any
    better_da: float
    worse_da: float


def darr_pairs_from_da(da: Mapping[Tuple[Any, Any], float], margin: float = DARR_MARGIN) -> list[DarrPair]:
    """Build daRR pairs from raw DA segment scores, as in WMT18 findings Sec. 3.1.

    For every segment, all pairs of the systems judged on it are formed and kept when their DA
    scores differ by *more than* ``margin``; the higher-DA one is ``better``. Pairs are ordered by
    segment (first appearance), then by system (first appearance), so results repeat.

    Args:
        da: the raw (0-100) DA score of each ``(segment, system)``.
        margin: the least DA difference, exclusive, that makes a pair (25 points, WMT18's); closer
            pairs are dropped, so no pair is a human tie.

    Returns:
        The pairs, each with its segment, the better and worse system and their DA scores.

    Raises:
        ArgumentError: ``margin`` is negative.
        DataError: a DA score is NaN or infinite (the message names its segment and system).

    Example:
        >>> pairs = darr_pairs_from_da({(1, "A"): 90, (1, "B"): 60, (1, "C"): 70, (2, "A"): 10})
        >>> [(p.better, p.worse) for p in pairs]
        [('A', 'B')]
    """
    if margin < 0:
        raise ArgumentError(f"margin must be >= 0, got {margin}")
    by_segment: dict[Hashable, list[tuple[Hashable, float]]] = {}
    for (segment, system), score in da.items():
        score = float(score)
        if not np.isfinite(score):
            raise DataError(f"DA score of segment {segment!r}, system {system!r} is not finite")
        by_segment.setdefault(segment, []).append((system, score))
    pairs = []
    for segment, judged in by_segment.items():
        for (sys_a, da_a), (sys_b, da_b) in itertools.combinations(judged, 2):
            if abs(da_a - da_b) <= margin:
                continue  # too close to call: WMT drops these, so there are no human ties
            if da_a > da_b:
                pairs.append(DarrPair(segment, sys_a, sys_b, da_a, da_b))
            else:
                pairs.append(DarrPair(segment, sys_b, sys_a, da_b, da_a))
    return pairs


def williams_test(r12: float, r13: float, r23: float, n: int) -> Tuple[float, float]:
    """Williams test that corr(human, A) = ``r12`` exceeds corr(human, B) = ``r13``.

    One-sided, df = n - 3 (Williams 1959, as used for metrics by Graham and Baldwin 2014 and
    WMT). WMT compares absolute correlations: pass ``abs(r)`` for metrics whose sign is irrelevant
    (`williams_test_scores` does so from raw scores).

    Args:
        r12: the correlation of metric A with the human scores.
        r13: the correlation of metric B with the human scores.
        r23: the correlation of metric A with metric B.
        n: the number of items the correlations are over (systems, at the system level).

    Returns:
        ``(t, p)``: the t statistic and its one-sided p-value; A is significantly better than B
        when p < 0.05.

    Raises:
        ArgumentError: ``n`` is 3 or fewer, a correlation is outside [-1, 1], or the three are
            perfectly collinear (the test is undefined).

    Example:
        >>> t, p = williams_test(0.9, 0.8, 0.85, 20)
        >>> round(t, 4), round(p, 4)
        (1.7292, 0.0509)
    """
    if n <= 3:
        raise ArgumentError(f"the Williams test needs more than 3 items (df = n - 3), got n={n}")
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1.0 <= r <= 1.0:
            raise ArgumentError(f"{name} must be a correlation in [-1, 1], got {r}")
    # K is the determinant of the 3x3 correlation matrix.
    # Rounding can leave the determinant of a singular matrix (identical metrics) slightly negative.
    k = max(1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23, 0.0)
    denominator = np.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    if denominator == 0:
        raise ArgumentError("the Williams test is undefined for perfectly collinear scores")
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / denominator
    p = scipy_stats.t.sf(t, df=n - 3)
    return float(t), float(p)


def williams_test_scores(human: ArrayLike, metric_a: ArrayLike, metric_b: ArrayLike) -> Tuple[float, float]:
    """Williams test on raw scores: is |r(human, A)| significantly above |r(human, B)|?

    Absolute Pearson correlations as in the WMT scripts; r(A, B) is sign-corrected so that a
    metric with negative correlation (an error metric) is compared as if it were negated.

    Args:
        human: the human score of each item (system).
        metric_a: metric A's score of the same items.
        metric_b: metric B's score of the same items.

    Returns:
        ``(t, p)`` as `williams_test`: A is significantly better than B when p < 0.05.

    Raises:
        ArgumentError: the scores differ in length, hold fewer than 4 items, a NaN or infinite
            value, or one of them is constant.

    Example:
        >>> t, p = williams_test_scores([1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 9],
        ...                             [2, 1, 4, 3, 6, 5, 8, 7])
        >>> p < 0.05
        True
    """
    r12 = pearson(human, metric_a)
    r13 = pearson(human, metric_b)
    r23 = pearson(metric_a, metric_b) * np.sign(r12) * np.sign(r13)
    return williams_test(abs(r12), abs(r13), float(r23), len(np.asarray(human)))


def hybrid_systems(
    human: np.ndarray,
    metric: np.ndarray,
    n_hybrids: int = 10_000,
    seed: int = 12345,
    chunk: int = 1000,
) -> Tuple[np.ndarray, np.ndarray]:
    """Hybrid super-sampling (Graham and Liu 2016; WMT18 findings Sec. 4.2).

    Each hybrid picks a random pair of distinct systems and takes every segment from one of the
    two at random; its human score is the mean of the sampled segments' human scores (BERTScore,
    Sec. 4, "average of segment-level human judgments") and its metric score the mean of their
    metric scores.

    Args:
        human: the ``(systems, segments)`` human scores; a missing judgment is NaN and left out of
            a hybrid's human mean (WMT DA covers about 95% of the segments of a system).
        metric: the ``(systems, segments)`` metric scores, all finite.
        n_hybrids: the number of hybrid systems (10,000, as WMT18).
        seed: the seed of numpy's generator.
        chunk: the hybrids drawn at once: memory stays at ``chunk`` by segments, and the draws
            depend on it (keep it to repeat a run).

    Returns:
        ``(human, metric)``: two arrays of length ``n_hybrids``, the hybrids' scores.

    Raises:
        ArgumentError: the arrays are not ``(systems, segments)`` of one shape, hold fewer than 2
            systems, a NaN or infinite metric score, or a hybrid has no human-judged segment.

    Example:
        >>> h, m = hybrid_systems(np.array([[1.0, 1], [0, 0]]), np.array([[2.0, 2], [0, 0]]), 4, seed=1)
        >>> bool(np.allclose(m, 2 * h))
        True
    """
    human = np.asarray(human, dtype=float)
    metric = np.asarray(metric, dtype=float)
    if human.ndim != 2 or human.shape != metric.shape:
        raise ArgumentError(
            f"human and metric must be (systems, segments) arrays of one shape, got {human.shape} and {metric.shape}"
        )
    n_systems, n_segments = human.shape
    if n_systems < 2:
        raise ArgumentError(f"hybrids need at least 2 systems, got {n_systems}")
    if not np.all(np.isfinite(metric)):
        raise ArgumentError("metric scores contain NaN or infinite values")
    rng = np.random.default_rng(seed)
    human_out = np.empty(n_hybrids)
    metric_out = np.empty(n_hybrids)
    columns = np.arange(n_segments)
    # Chunks keep memory at chunk x segments instead of 10K x segments.
    for start in range(0, n_hybrids, chunk):
        size = min(chunk, n_hybrids - start)
        first = rng.integers(n_systems, size=size)
        # A second system different from the first, uniform over the others.
        second = (first + rng.integers(1, n_systems, size=size)) % n_systems
        take_first = rng.integers(2, size=(size, n_segments), dtype=bool)
        chosen = np.where(take_first, first[:, None], second[:, None])
        sampled_human = human[chosen, columns]
        counts = np.sum(~np.isnan(sampled_human), axis=1)
        if np.any(counts == 0):
            raise ArgumentError("a hybrid has no human-judged segment; too few DA judgments")
        human_out[start : start + size] = np.nansum(sampled_human, axis=1) / counts
        metric_out[start : start + size] = metric[chosen, columns].mean(axis=1)
    return human_out, metric_out


@dataclass(frozen=True)
class ModelSelection:
    """Model-selection scores on hybrids (BERTScore paper, Sec. 4 and Table 3)."""

    hits_at_1: float
    mrr: float
    diff: float


def model_selection(
    human: ArrayLike,
    metric: ArrayLike,
    sample_size: int = 100,
    repeats: int = 100_000,
    seed: int = 12345,
    chunk: int = 1000,
) -> ModelSelection:
    """Hits@1, MRR and Diff of a metric choosing the best of ``sample_size`` hybrid systems.

    BERTScore (Zhang et al. 2020, Sec. 4): draw ``sample_size`` of the hybrids without
    replacement, let the metric pick its top system, and compare with the human ranking. Hits@1
    is the share of draws where the metric's top system is the human top system; MRR the mean of
    1 / (human rank of the metric's top system), the rank 1 + the number of sampled systems with
    a strictly higher human score; Diff the mean of human(top human) - human(top metric) (the
    paper reports it x100). A metric tie at the top is broken arbitrarily (ties are rare with
    continuous hybrid scores).

    Args:
        human: the human score of each hybrid system (`hybrid_systems`' first array).
        metric: the metric score of each hybrid system (its second).
        sample_size: the systems of each draw, from 2 to the number of hybrids (100, as the paper).
        repeats: the number of draws (100,000, as the paper).
        seed: the seed of numpy's generator.
        chunk: the draws made at once: memory stays at ``chunk`` by hybrids, and the draws depend
            on it (keep it to repeat a run).

    Returns:
        ``hits_at_1``, ``mrr`` and ``diff``, each a mean over the draws.

    Raises:
        ArgumentError: ``human`` and ``metric`` differ in length or hold a NaN or infinite value,
            or ``sample_size`` is out of range.

    Example:
        >>> model_selection([0.1, 0.2, 0.3], [1, 2, 3], sample_size=3, repeats=10).hits_at_1
        1.0
    """
    human_arr = as_finite_array(human, "human")
    metric_arr = as_finite_array(metric, "metric")
    if human_arr.shape != metric_arr.shape:
        raise ArgumentError("human and metric differ in length")
    if not 1 < sample_size <= human_arr.size:
        raise ArgumentError(f"sample_size must be in 2..{human_arr.size}, got {sample_size}")
    rng = np.random.default_rng(seed)
    hits = reciprocal = diff = 0.0
    for start in range(0, repeats, chunk):
        size = min(chunk, repeats - start)
        # The k smallest of i.i.d. uniform keys are a uniform k-subset (argpartition is O(n)).
        keys = rng.random((size, human_arr.size))
        draws = np.argpartition(keys, sample_size - 1, axis=1)[:, :sample_size]
        sampled_human = human_arr[draws]
        picked = sampled_human[np.arange(size), np.argmax(metric_arr[draws], axis=1)]
        best = sampled_human.max(axis=1)
        ranks = 1 + np.sum(sampled_human > picked[:, None], axis=1)
        hits += float(np.sum(ranks == 1))
        reciprocal += float(np.sum(1.0 / ranks))
        diff += float(np.sum(best - picked))
    return ModelSelection(hits / repeats, reciprocal / repeats, diff / repeats)
