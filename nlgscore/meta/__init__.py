"""Meta-evaluation of metrics against human judgments (data -> scores -> statistics -> table).

* ``data/``: readers of human judgments, system outputs and score files (``loaders``: WMT19 daRR,
  SummEval; ``wmt21``: WMT21 DA folders; ``ratings``: MQM/DA human-scores folders; ``wmt_sets``:
  WMT24/WMT25 in WMT's, mt-metrics-eval's or paragraph-JSONL layout;
  ``mtme`` / ``precomputed``: score files; ``files``: the text-file rule and atomic writes;
  ``alignment``: the segment-id check).
* ``engine``: scores of registry metrics by spec (chrF, BLEU, sentBLEU and ROUGE included:
  ``nlgscore.strings``), each scorer from ``registry.cached``; ``one_pass`` options in one pass,
  corpus chrF/BLEU system scores, the score cache (finished chunks kept).
* ``stats/``: every statistic, one name each (correlations, pairwise accuracy, SPA, acc-t,
  daRR tau, Williams test, summary-level correlations, resampling and significance tests).
* ``tasks/``: ``wmt19``, ``wmt21``, ``summeval``, ``mqm``, ``wmt24`` and ``wmt25`` returning a ``MetaTable``
  (``tasks.wmt21(data_dir, metrics=["chrf"], scores={"mine": "mine.tsv"})``); ``descriptors``: one
  row per data set, from which ``nlgscore meta`` builds its subcommands; ``runner``: the table and
  the run skeleton every task shares; ``options``: ``RunOptions``, the run settings every task
  takes as one object.
* ``report``: result rows as a table, JSON or CSV; ``plot``: the one chart of them.
* ``calibrate`` / ``rescale_baseline``: BERTScore layer selection and baseline files.

The public names: :mod:`tasks` (``wmt19``, ``wmt21``, ``summeval``, ``mqm``), the data model
:class:`EvalSet`, a data set's :class:`TaskDescriptor` with its :class:`Measure` rows, :func:`run`
(one descriptor's metrics scored into a :class:`MetaTable`, its settings one :class:`RunOptions`)
and the statistics below.

>>> import numpy as np
>>> from nlgscore.meta import EvalSet, pearson
>>> data = EvalSet(name="toy", systems=["a", "b"], hyps=[["x", "y"], ["x", "z"]], refs=[["x", "y"]],
...                human={"system": np.array([0.9, 0.4])})
>>> data.items, round(pearson([1.0, 2.0, 3.0], [2.0, 4.0, 7.0]), 4)
(2, 0.9934)
"""

from importlib import import_module
from typing import Any

from nlgscore.meta.stats.resample import (
    bootstrap_ci,
    compare_systems_bootstrap,
    compare_systems_randomization,
    paired_bootstrap,
    subset_significance,
)
from nlgscore.meta.stats.summary import (
    corpus_correlation,
    pair_accuracy,
    summary_level_correlation,
)
from nlgscore.meta.stats.wmt import (
    darr_kendall_tau,
    darr_pairs_from_da,
    hybrid_systems,
    model_selection,
    pearson,
    williams_test,
    williams_test_scores,
)

# public name -> module: imported on first use (the tasks read data folders and build metrics)
_LAZY = {
    "tasks": "nlgscore.meta.tasks",
    "EvalSet": "nlgscore.meta.data.model",
    "run": "nlgscore.meta.tasks.generic",
    "TaskDescriptor": "nlgscore.meta.tasks.generic",
    "Measure": "nlgscore.meta.tasks.measures",
    "MetaTable": "nlgscore.meta.tasks.runner",
    "RunOptions": "nlgscore.meta.tasks.options",
}

__all__ = [
    "EvalSet",
    "Measure",
    "MetaTable",
    "RunOptions",
    "TaskDescriptor",
    "run",
    "tasks",
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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlgscore.meta' has no attribute {name!r}")
    module = import_module(_LAZY[name])
    value = module if name == "tasks" else getattr(module, name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
