"""Meta-evaluation of metrics against human judgments (consumes scores only).

* ``wmt``: WMT daRR Kendall's tau-like, daRR from DA, Pearson, Williams test, hybrids.
* ``summ``: BARTScore-style summary-level / pair-accuracy / corpus correlations.
* ``resample``: bootstrap CIs, paired bootstrap, BARTScore subsets, sacreBLEU-style
  paired-bs / paired-ar system comparison.
* ``loaders``: the WMT19 daRR, SummEval, BAGEL and WMT21 data files.
* ``baselines`` / ``scoring``: chrF, sentBLEU and registry metrics by spec string.
* ``report``: result rows as a table, JSON, CSV or bar chart.
"""

from nlgscore.meta.resample import (
    bootstrap_ci,
    compare_systems_bootstrap,
    compare_systems_randomization,
    paired_bootstrap,
    subset_significance,
)
from nlgscore.meta.summ import corpus_correlation, pair_accuracy, summary_level_correlation
from nlgscore.meta.wmt import (
    darr_kendall_tau,
    darr_pairs_from_da,
    hybrid_systems,
    model_selection,
    pearson,
    williams_test,
    williams_test_scores,
)

__all__ = [
    "bootstrap_ci",
    "compare_systems_bootstrap",
    "compare_systems_randomization",
    "corpus_correlation",
    "darr_kendall_tau",
    "darr_pairs_from_da",
    "hybrid_systems",
    "model_selection",
    "paired_bootstrap",
    "pair_accuracy",
    "pearson",
    "subset_significance",
    "summary_level_correlation",
    "williams_test",
    "williams_test_scores",
]
