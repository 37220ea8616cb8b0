"""Every meta-evaluation statistic, one name each, as small pure functions over numpy arrays.

* ``correlation``: ``pearson`` (checked: errors on constant input; WMT18 Eq. 2), mt-metrics-eval's
  segment-level ``correlation`` (no grouping or item-grouped; ``CORRELATIONS`` NaN-safe r and tau-b).
* ``pairwise``: ``pairwise_accuracy`` (WMT22/23), ``soft_pairwise_accuracy`` (SPA, WMT24/25),
  ``acc_eq`` and ``acc_t`` (tie-calibrated, WMT23-25), ``pairwise_difference_pearson`` (PDP) and
  ``pdp_undefined`` (why a PDP has no value).
* ``avg_corr``: WMT24/25's average over tasks, average rank and their significance clusters.
* ``significance``: ``permutation_test`` (PERM-BOTH), ``pairs_permutation_test`` (acc-t),
  ``cluster_ranks`` (WMT's significance clusters).
* ``wmt``: daRR Kendall's tau-like (``darr_kendall_tau``, ``tau_from_outcomes``), daRR from DA,
  the Williams test, hybrid super-sampling (WMT17-21).
* ``summary``: BARTScore's summary-level correlations (``DOCUMENT_CORRELATIONS``), pair accuracy.
* ``resample``: bootstrap intervals, paired bootstrap, BARTScore's subset test, sacreBLEU-style
  paired tests of systems.

>>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 6), pairwise_accuracy([1, 2, 3], [10, 30, 20])
(0.964764, 0.6666666666666666)
"""

from nlgscore.meta.stats.correlation import (
    CORRELATIONS,
    as_finite_array,
    correlation,
    pearson,
)
from nlgscore.meta.stats.pairwise import (
    PCE_PERMUTATIONS,
    PCE_SEED,
    ItemPairs,
    acc_eq,
    acc_t,
    item_pairs,
    pair_outcomes,
    pairwise_accuracy,
    pairwise_difference_pearson,
    pairwise_p_values,
    pdp_undefined,
    permutation_signs,
    soft_pairwise_accuracy,
    spa_from_p_values,
    tie_calibration,
)
from nlgscore.meta.stats.significance import (
    SIG_BLOCK,
    SIG_EARLY_MAX,
    SIG_EARLY_MIN,
    SIG_LEVEL,
    SIG_RESAMPLES,
    cluster_ranks,
    pairs_permutation_test,
    permutation_test,
)

__all__ = [
    "CORRELATIONS",
    "ItemPairs",
    "PCE_PERMUTATIONS",
    "PCE_SEED",
    "SIG_BLOCK",
    "SIG_EARLY_MAX",
    "SIG_EARLY_MIN",
    "SIG_LEVEL",
    "SIG_RESAMPLES",
    "acc_eq",
    "acc_t",
    "as_finite_array",
    "cluster_ranks",
    "correlation",
    "item_pairs",
    "pair_outcomes",
    "pairs_permutation_test",
    "pairwise_accuracy",
    "pairwise_difference_pearson",
    "pairwise_p_values",
    "pdp_undefined",
    "pearson",
    "permutation_signs",
    "permutation_test",
    "soft_pairwise_accuracy",
    "spa_from_p_values",
    "tie_calibration",
]
