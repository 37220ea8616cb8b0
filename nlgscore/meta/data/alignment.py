"""Do the segment ids of a DA file follow the lines of the text files?

When two systems output the same string for a segment, their DA scores for that segment should
agree more than the scores of two different outputs do. That alone is not a test: systems
that often agree are similar systems with similar scores everywhere, so even a misaligned file
shows some gap. The check therefore compares the observed gap with the gaps obtained when the
segment order of the texts is randomly permuted (the same permutation for every system, so
which systems agree how often is kept and only the link between a text line and its DA row is
broken). Aligned data beat every permutation; a misaligned file looks like one of them.

Measured on WMT21 de-en (z scores, MT systems): the corrected file has r = 0.166 for identical
and 0.094 for different outputs (gap 0.072, p = 1/201); the upstream file, whose SIDs number a
document-sorted order, has a gap near those of random permutations.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nlgscore.errors import ArgumentError

# Below this many identical-output score pairs the check has too little power to say anything.
MIN_IDENTICAL = 100
PERMUTATIONS = 200
# A smaller p than this is read as aligned; 1/(PERMUTATIONS+1) is the smallest p possible. The
# corrected WMT21 de-en file gives 0.005 (0.015 on its first 40 segments); misaligned copies
# (shuffled, upstream document-sorted SIDs, shifted by one line) give 0.18 to 0.61.
ALIGNED_P = 0.05


@dataclass(frozen=True)
class AlignmentCheck:
    """Result of ``check_alignment``; ``aligned`` is None when there is too little data."""

    n_identical: int
    r_identical: float
    r_different: float
    gap: float
    p_value: float
    aligned: object  # True, False or None

    def describe(self) -> str:
        """One line for reports."""
        if self.aligned is None:
            return (
                f"alignment check skipped: only {self.n_identical} score pairs of identical outputs "
                f"(needs {MIN_IDENTICAL})"
            )
        verdict = (
            "segment ids follow the text lines"
            if self.aligned
            else (
                "WARNING: the DA segment ids do not seem to follow the lines of the text files; "
                "segment-level numbers are not meaningful (system level is unaffected)"
            )
        )
        return (
            f"alignment check: identical outputs r={self.r_identical:.3f} vs different r={self.r_different:.3f} "
            f"({self.n_identical} identical pairs), gap {self.gap:.3f}, permutation p={self.p_value:.3f}: {verdict}"
        )


def _pooled_r(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> float:
    n = mask.sum()
    if n < 3:
        return float("nan")
    sx, sy = (x * mask).sum(), (y * mask).sum()
    sxx, syy, sxy = (x * x * mask).sum(), (y * y * mask).sum(), (x * y * mask).sum()
    cov = sxy - sx * sy / n
    var = (sxx - sx * sx / n) * (syy - sy * sy / n)
    return float(cov / np.sqrt(var)) if var > 0 else float("nan")


def check_alignment(
    hyps: Sequence[Sequence[str]], scores: np.ndarray, permutations: int = PERMUTATIONS, seed: int = 12345
) -> AlignmentCheck:
    """Permutation test that identical outputs get more alike segment scores than chance.

    ``hyps[s][i]`` is system ``s``'s output for segment ``i``; ``scores`` is ``(systems,
    segments)`` DA (z) with NaN where unjudged.

    >>> rng = np.random.default_rng(0)
    >>> hyps = [[f"t{i}" if i % 2 else f"s{k}-{i}" for i in range(300)] for k in range(4)]
    >>> quality = {text: rng.normal() for outputs in hyps for text in outputs}  # one per distinct text
    >>> da = np.array([[quality[text] + rng.normal() for text in outputs] for outputs in hyps])
    >>> check_alignment(hyps, da).aligned, check_alignment(hyps, da[:, rng.permutation(300)]).aligned
    (True, False)
    """
    scores = np.asarray(scores, dtype=float)
    n_systems, n_segments = scores.shape
    if len(hyps) != n_systems or any(len(h) != n_segments for h in hyps):
        raise ArgumentError("hyps must hold one output per segment for every row of scores")
    pairs = list(itertools.combinations(range(n_systems), 2))
    x = np.array([scores[a] for a, _ in pairs])
    y = np.array([scores[b] for _, b in pairs])
    judged = ~(np.isnan(x) | np.isnan(y))
    x, y = np.nan_to_num(x), np.nan_to_num(y)
    same = np.array([[ha == hb for ha, hb in zip(hyps[a], hyps[b])] for a, b in pairs])

    def gap(identical: np.ndarray):
        r_same = _pooled_r(x, y, identical & judged)
        r_diff = _pooled_r(x, y, ~identical & judged)
        return r_same, r_diff, r_same - r_diff

    n_identical = int((same & judged).sum())
    r_same, r_diff, observed = gap(same)
    if n_identical < MIN_IDENTICAL or np.isnan(observed):
        return AlignmentCheck(n_identical, r_same, r_diff, observed, float("nan"), None)
    rng = np.random.default_rng(seed)
    null = np.array([gap(same[:, rng.permutation(n_segments)])[2] for _ in range(permutations)])
    p = (int(np.sum(null >= observed)) + 1) / (permutations + 1)
    return AlignmentCheck(n_identical, r_same, r_diff, observed, p, p < ALIGNED_P)
