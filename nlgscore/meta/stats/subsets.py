"""The BARTScore benchmark's significance test, with the authors' own subsets.

Yuan et al. (2021), Sec. 5 and their analysis code (neulab/BARTScore ``analysis.py``,
``sig_test_two``): ``random.seed(666)``, then 1,000 times: shuffle the list of record ids (the
same list, shuffled again each time) and keep its first ``int(0.8 * n)``; metric A is
significantly better than B when its statistic on a subset is higher on more than 950 of the
1,000 subsets, significantly worse on fewer than 50. ``authors_subsets`` draws exactly those
subsets (Python's ``random`` as their code calls it), so the win counts are theirs.
``nlgscore.meta.stats.resample.subset_significance`` is the same test on numpy's generator.
"""

from __future__ import annotations

import random
from typing import Callable, List, Sequence

import numpy as np

from nlgscore.errors import ArgumentError

AUTHORS_SEED = 666
AUTHORS_ITERATIONS = 1000
AUTHORS_FRACTION = 0.8
AUTHORS_SHARE = 0.95  # more than 950 of 1,000 wins: significantly better; fewer than 50: worse


def authors_subsets(
    n: int, iterations: int = AUTHORS_ITERATIONS, fraction: float = AUTHORS_FRACTION, seed: int = AUTHORS_SEED
) -> List[np.ndarray]:
    """The record positions of each subset, in the shuffled order the authors' code visits them.

    Args:
        n: how many records (documents, samples, DARR pairs) the data set has.
        iterations: how many subsets (1,000 in the paper).
        fraction: the share of records each subset keeps (0.8).
        seed: the seed of Python's ``random`` (666 in the authors' code).

    Returns:
        ``iterations`` arrays of ``int(fraction * n)`` positions each.

    Raises:
        ArgumentError: ``n`` below 1 or ``fraction`` outside (0, 1].

    Example:
        >>> [s.tolist() for s in authors_subsets(5, iterations=2)]  # the second reshuffles the first
        [[0, 2, 1, 4], [4, 2, 1, 0]]
    """
    if n < 1:
        raise ArgumentError(f"the significance test needs at least 1 record, got {n}")
    if not 0 < fraction <= 1:
        raise ArgumentError(f"fraction must be in (0, 1], got {fraction}")
    rng = random.Random(seed)  # what random.seed(seed) seeds: the module functions' instance
    order = list(range(n))
    keep = int(fraction * n)  # the authors' int(0.8 * len(doc_ids))
    out = []
    for _ in range(iterations):
        rng.shuffle(order)
        out.append(np.array(order[:keep], dtype=np.int64))
    return out


def subset_wins(
    statistic_a: Callable[[np.ndarray], float],
    statistic_b: Callable[[np.ndarray], float],
    subsets: Sequence[np.ndarray],
) -> int:
    """On how many ``subsets`` A's statistic is strictly higher than B's (a NaN never wins).

    Example:
        >>> values = np.array([1.0, 2.0, 3.0])
        >>> subset_wins(lambda s: values[s].sum(), lambda s: 2.0, [np.array([0]), np.array([1, 2])])
        1
    """
    return int(sum(bool(statistic_a(s) > statistic_b(s)) for s in subsets))


def verdict(wins: int, iterations: int, share: float = AUTHORS_SHARE) -> int:
    """``1``: A significantly better (wins > share * iterations); ``-1``: worse (wins < (1 - share) *
    iterations); ``0``: undecided. The authors' ``> 950`` and ``< 50`` of 1,000.

    Example:
        >>> verdict(951, 1000), verdict(950, 1000), verdict(49, 1000)
        (1, 0, -1)
    """
    threshold = round(share * iterations)  # an integer, so 950 and 50 are compared exactly
    if wins > threshold:
        return 1
    if wins < iterations - threshold:
        return -1
    return 0
