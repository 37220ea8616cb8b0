"""Meta-evaluation of metrics against human judgments.

* ``tasks``: the WMT19, WMT21 and SummEval meta-evaluations as functions returning result
  tables (``tasks.wmt21(data_dir, metrics=["chrf"], scores={"mine": "mine.tsv"})``); ``mqm``:
  any MQM/DA human-scores folder (``ratings``) with the WMT22-25 measures.
* ``descriptors``: one row per data set (files, human kind, reference, levels, measures, options);
  ``nlgscore meta`` builds its subcommands from them. ``runner``: the table and the run skeleton
  every task shares (finished metrics kept on an interruption); ``engine``: models loaded once,
  BARTScore directions in one pass, the score cache.
* ``stats``: pairwise accuracy, soft pairwise accuracy, acc-t with tie calibration, no-grouping and
  item-grouped correlations, permutation tests and significance clusters (WMT22-25).
* ``wmt``: WMT daRR Kendall's tau-like (ties rules), daRR from DA, Pearson, Williams test, hybrids.
* ``mtme``: mt-metrics-eval score files; ``files``: the text-file rule and atomic writes.
* ``wmt21`` / ``alignment``: WMT21 DA folders of any to-English pair; the segment-id check.
* ``summ``: BARTScore-style summary-level / pair-accuracy / corpus correlations.
* ``resample``: bootstrap CIs, paired bootstrap, BARTScore subsets, paired-bs / paired-ar.
* ``loaders``: the data folder and the WMT19 daRR, SummEval and BAGEL files.
* ``baselines`` / ``scoring`` / ``precomputed``: string baselines (chrF, BLEU, sentBLEU, ROUGE),
  registry metrics by spec string, and precomputed score files.
* ``report``: result rows as a table, JSON or CSV; ``plot``: the one chart of them.
* ``calibrate``: BERTScore layer selection on human judgments.
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
