"""Summarisation, factuality and data-to-text meta-evaluation as in BARTScore (Yuan et al. 2021).

Sec. 4 and Table 1 of the paper, with its analysis code's conventions: summary-level
correlations are computed per document across systems and averaged (documents whose human
or metric scores are constant are skipped); factuality pairs use strict ``correct >
incorrect`` accuracy; QAGS uses Pearson and data-to-text a corpus-level Spearman.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from nlgscore.errors import ArgumentError
from nlgscore.meta.stats.correlation import CORRELATIONS, as_finite_array, pearson

# Spearman and Kendall (scipy's default tau-b, as the BARTScore analysis code uses) are the one
# table's; Pearson is the checked one (constant documents are skipped before it is called).
DOCUMENT_CORRELATIONS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "spearman": CORRELATIONS["spearman"],
    "kendall": CORRELATIONS["kendall"],
    "pearson": lambda h, m: pearson(h, m, min_items=2),
}


def _correlation(method: str) -> Callable[[np.ndarray, np.ndarray], float]:
    try:
        return DOCUMENT_CORRELATIONS[method]
    except KeyError:
        raise ArgumentError(f"method must be one of {sorted(DOCUMENT_CORRELATIONS)}, got {method!r}") from None


def _as_matrix(values: np.ndarray, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ArgumentError(f"{name} must be a non-empty (documents, systems) array")
    if not np.all(np.isfinite(matrix)):
        raise ArgumentError(f"{name} has NaN or infinite values")
    return matrix


def informative_documents(human: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Mask of documents (rows) where neither human nor metric scores are constant.

    >>> informative_documents([[1, 2], [3, 3]], [[0, 1], [0, 1]]).tolist()
    [True, False]
    """
    human_m, metric_m = _as_matrix(human, "human"), _as_matrix(metric, "metric")
    if human_m.shape != metric_m.shape:
        raise ArgumentError(f"human and metric shapes differ: {human_m.shape} != {metric_m.shape}")
    return (np.ptp(human_m, axis=1) > 0) & (np.ptp(metric_m, axis=1) > 0)


def per_document_correlations(human: np.ndarray, metric: np.ndarray, method: str = "spearman") -> np.ndarray:
    """Per-document correlation across systems, one per document: NaN where the human or metric
    scores of the document are constant (so that two metrics' vectors pair up document by document).

    >>> per_document_correlations([[1, 2, 3], [5, 5, 5]], [[1, 3, 2], [1, 2, 3]]).tolist()
    [0.5, nan]
    """
    correlate = _correlation(method)
    keep = informative_documents(human, metric)
    human_m, metric_m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    out = np.full(len(keep), np.nan)
    for d in np.flatnonzero(keep):
        out[d] = correlate(human_m[d], metric_m[d])
    return out


def document_correlations(human: np.ndarray, metric: np.ndarray, method: str = "spearman") -> np.ndarray:
    """Per-document correlation across systems, for the informative documents only.

    ``human`` and ``metric`` are ``(documents, systems)`` arrays. Documents with constant
    human or metric scores have no correlation and are left out, as in the BARTScore code;
    ValueError when none is left. Resampling this vector bootstraps over documents.

    >>> document_correlations([[1, 2, 3], [5, 5, 5]], [[1, 3, 2], [1, 2, 3]]).tolist()
    [0.5]
    """
    correlations = per_document_correlations(human, metric, method)
    kept = correlations[~np.isnan(correlations)]
    if kept.size == 0:
        raise ArgumentError("every document has constant human or metric scores: no correlation")
    return kept


def summary_level_correlation(human: np.ndarray, metric: np.ndarray, method: str = "spearman") -> float:
    """Mean over documents of the correlation across systems (BARTScore's summary level).

    Documents whose human or metric scores are constant have no correlation and are skipped,
    as the BARTScore analysis code does.

    Args:
        human: the ``(documents, systems)`` human scores.
        metric: the ``(documents, systems)`` metric scores.
        method: ``"spearman"``, ``"kendall"`` (tau-b, scipy's default) or ``"pearson"``.

    Returns:
        The mean of the per-document correlations.

    Raises:
        ArgumentError: the arrays are empty, of different shapes or not finite, ``method`` is
            unknown, or every document is constant.

    Example:
        >>> human = [[1, 2, 3], [1, 2, 3], [5, 5, 5]]
        >>> metric = [[1, 2, 3], [3, 2, 1], [1, 2, 3]]
        >>> summary_level_correlation(human, metric)  # (1 + -1) / 2; the constant document is skipped
        0.0
    """
    return float(np.mean(document_correlations(human, metric, method)))


def pair_accuracy(correct: ArrayLike, incorrect: ArrayLike) -> float:
    """Share of pairs where the metric scores the correct text strictly higher (Rank19).

    Args:
        correct: the metric's score of the factually correct text of each pair.
        incorrect: the metric's score of the incorrect text of the same pair; a tie counts as a miss.

    Returns:
        The accuracy, in [0, 1].

    Raises:
        ArgumentError: the scores are empty, differ in length or hold a NaN or infinite value.

    Example:
        >>> pair_accuracy([0.9, 0.5, 0.2], [0.1, 0.5, 0.4])
        0.3333333333333333
    """
    correct_a = as_finite_array(correct, "correct")
    incorrect_a = as_finite_array(incorrect, "incorrect")
    if correct_a.shape != incorrect_a.shape:
        raise ArgumentError("correct and incorrect differ in length")
    return float(np.mean(correct_a > incorrect_a))


def corpus_correlation(human: ArrayLike, metric: ArrayLike, method: str = "spearman") -> float:
    """Correlation over all samples (data-to-text: Spearman; QAGS: Pearson).

    Args:
        human: the human score of each sample.
        metric: the metric score of the same samples.
        method: ``"spearman"``, ``"kendall"`` (tau-b) or ``"pearson"``.

    Returns:
        The correlation.

    Raises:
        ArgumentError: the scores differ in length, hold fewer than 2 samples or a NaN or
            infinite value, ``method`` is unknown, or a side is constant (scipy would give NaN).

    Example:
        >>> round(corpus_correlation([1, 2, 3, 4], [10, 20, 40, 30]), 6)
        0.8
    """
    human_a, metric_a = as_finite_array(human, "human"), as_finite_array(metric, "metric")
    if human_a.shape != metric_a.shape:
        raise ArgumentError("human and metric differ in length")
    if human_a.size < 2 or np.ptp(human_a) == 0 or np.ptp(metric_a) == 0:
        raise ArgumentError("correlation needs at least 2 samples and non-constant scores")
    return _correlation(method)(human_a, metric_a)
