"""The canonical tie rule as tests check a choice: equal values go to the lowest
index, and a choice compared with an independent computation is checked with that computation's
bound, never by an argmax over nearly equal values.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np


def lowest_best(values: Sequence[float]) -> int:
    """The lowest index holding the maximum of ``values`` (exact comparison).

    >>> lowest_best([0.2, 0.7, 0.1, 0.7])
    1
    """
    values = np.asarray(values, dtype=np.float64)
    return int(np.flatnonzero(values == values.max())[0])


def assert_canonical_best(
    best: int, own: Sequence[float], other: Optional[Sequence[float]] = None, tol: float = 0.0
) -> None:
    """``best`` follows the tie rule on the chooser's ``own`` values (exactly), and is a best
    choice by ``other``, an independent computation of the same values, up to ``tol`` (the bound
    between the two computations, which the caller states): a near-tie there may go either way.
    """
    assert best == lowest_best(own), (best, list(own))
    if other is not None:
        other = np.asarray(other, dtype=np.float64)
        assert other[best] >= other.max() - 2 * tol, (best, other.tolist(), tol)
