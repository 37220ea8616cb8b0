"""The top-k systems of a system-level measure (Prism's and WMT19's "top 4 systems", BARTScore's
"translations from top-k systems"): which systems are the best k by human score, and which
relative-ranking pairs are among them.

Functions of numbers and names only; the task runner applies them to a data set's measures
(``--top-k K``: every system-level measure is also computed over the k best systems, and a daRR
Kendall's tau over the pairs whose two translations both come from them).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from nlgscore.errors import ArgumentError, ArgumentTypeError


def check_top_k(value: Any) -> Optional[int]:
    """``value`` as ``--top-k`` takes it: None (every system) or an integer >= 2.

    >>> check_top_k(4), check_top_k(None)
    (4, None)
    >>> check_top_k(1)
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: top_k must be an integer >= 2 (--top-k K: the best K systems by human score), got 1
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"top_k must be an integer >= 2 (--top-k K), got {value!r}")
    if value < 2:
        raise ArgumentError(
            f"top_k must be an integer >= 2 (--top-k K: the best K systems by human score), got {value}"
        )
    return int(value)


def top_systems(human: ArrayLike, k: int) -> np.ndarray:
    """Rows of the ``k`` systems with the highest human scores, best first; systems without a human
    score (NaN) are never among them, and of two equal scores the earlier system comes first.

    Args:
        human: one human score per system (NaN where a system has none).
        k: how many systems to keep (all of them when fewer have a score).

    Returns:
        The rows, as an integer array of at most ``k`` entries.

    Example:
        >>> top_systems([0.2, 0.9, float("nan"), 0.9, 0.5], 3).tolist()
        [1, 3, 4]
    """
    scores = np.asarray(human, dtype=float)
    rated = np.flatnonzero(~np.isnan(scores))
    order = rated[np.argsort(-scores[rated], kind="stable")]
    return order[:k]


def pairs_within(better: Sequence[Any], worse: Sequence[Any], systems: Sequence[Any]) -> np.ndarray:
    """Mask of the relative-ranking pairs whose better and worse translations both come from ``systems``.

    Example:
        >>> pairs_within(["A", "B", "C"], ["B", "C", "A"], ["A", "B"]).tolist()
        [True, False, False]
    """
    kept = set(systems)
    return np.array([b in kept and w in kept for b, w in zip(better, worse, strict=True)], dtype=bool)
