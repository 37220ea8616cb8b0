"""Measures as rows: (level, name, what the statistic takes, the statistic, resampling).

A descriptor lists its measures (after mt-metrics-eval's ``Task`` rows); the runner computes each
one per metric from the data set (``EvalSet``) and the metric's ``(systems, items)`` segment scores
and ``(systems,)`` system scores. ``inputs`` returns the statistic's arguments, or None when the
measure does not apply (no segment scores in a system-level score file, no segment rated for
every system). ``resampling="bootstrap"`` adds a percentile bootstrap interval resampling the first
axis of the inputs, which must be the items (``item_scores``); ``"none"`` gives the value alone.

``WMT22_MEASURES`` are the measures of the WMT22-25 metrics tasks on a systems x segments set
(``nlgscore meta mqm``): mt-metrics-eval's WMT24/WMT25 task settings, ``pce`` (SPA) at system
level and ``KendallWithTiesOpt(avg_by="item", sample_rate=1.0)`` (acc-t) at segment level.

>>> [f"{m.level} {m.name}" for m in WMT22_MEASURES][:3]
['system pearson', 'system accuracy', 'system spa']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

import numpy as np

from nlgscore.errors import DataError
from nlgscore.meta import stats
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.stats.wmt import darr_outcomes, tau_from_outcomes

Inputs = Callable[[EvalSet, Optional[np.ndarray], np.ndarray], Optional[Tuple[Any, ...]]]


@dataclass(frozen=True)
class Measure:
    """One row of a descriptor: a statistic of the human and metric scores at one level.

    Attributes:
        level: the level the rows report (``"system"``, ``"segment"``).
        name: the measure's name in the rows (``pearson``, ``acc-t``).
        inputs: ``inputs(data, seg, system)`` gives the statistic's arguments from the data set, the
            metric's ``(systems, items)`` segment scores (None when a score file has only system
            scores) and its ``(systems,)`` system scores; None where the measure does not apply.
        statistic: the statistic, called with what ``inputs`` gave (and the settings of ``uses``).
        resampling: ``"none"`` gives the value alone; ``"bootstrap"`` adds a percentile bootstrap
            interval resampling the first axis of the inputs, which must be the items.
        uses: the run settings the statistic takes as keywords (``"ties"``); the rows' signature
            names them.
        dataset: the rows' data-set name when not the data set's (SummEval: one per aspect).
        signature: appended to the rows' signature: how the measure formed its scores.
        top_k: also computed over the top-k systems (``--top-k``), as every system-level measure is:
            daRR tau over the pairs whose two systems are both among them.
    """

    level: str
    name: str
    inputs: Inputs
    statistic: Callable[..., float]
    resampling: str = "none"  # "none" or "bootstrap" (over the items of the inputs' first axis)
    uses: Tuple[str, ...] = ()  # run settings the statistic takes as keywords (e.g. "ties"); the signature names them
    dataset: str = ""  # the rows' data-set name when not the EvalSet's (SummEval: one per aspect)
    signature: str = ""  # appended to the rows' signature (how the measure formed its scores)
    top_k: bool = False  # also over the top-k systems (--top-k); system-level measures always are


def system_scores(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(human system scores, metric system scores)."""
    return data.human["system"], system


def segment_scores(
    data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(human, metric) ``(systems, items)`` matrices; None without metric segment scores."""
    return None if seg is None else (data.human["segment"], seg)


def item_scores(
    data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(human, metric) ``(items, systems)`` matrices, items first so a bootstrap resamples items."""
    return None if seg is None else (np.asarray(data.human["segment"]).T, seg.T)


def segment_matrix(seg: Optional[np.ndarray], metric: str) -> np.ndarray:
    """A metric's segment scores for a test that needs them; a DataError naming the metric without.

    >>> segment_matrix(np.zeros((2, 3)), "chrf").shape
    (2, 3)
    """
    if seg is None:
        raise DataError(
            f"{metric}: the significance test needs segment scores (its --scores file has system scores only)"
        )
    return seg


class SpaHuman:
    """The human side of SPA, computed once per data set: the segments every system was rated on,
    the shared permutation signs and the human p-values (``pce.py``)."""

    def __init__(self, human: np.ndarray) -> None:
        self.common = (~np.isnan(human)).all(axis=0)
        self.signs = stats.permutation_signs(int(self.common.sum())) if self.common.any() else None
        self.p_values = stats.pairwise_p_values(human[:, self.common], self.signs) if self.signs is not None else None

    def spa(self, metric: Optional[np.ndarray]) -> float:
        """SPA of a metric's ``(systems, segments)`` scores."""
        if self.signs is None or self.p_values is None:
            raise DataError("SPA needs segments that every system was rated on; this data set has none")
        if metric is None:
            raise DataError("SPA needs the metric's segment scores (a --scores file of system scores has none)")
        return stats.spa_from_p_values(self.p_values, stats.pairwise_p_values(metric[:, self.common], self.signs))


def spa_human(data: EvalSet) -> SpaHuman:
    """The data set's ``SpaHuman`` (computed on first use, then shared by every metric)."""
    return data.derived("spa", lambda: SpaHuman(np.asarray(data.human["segment"], dtype=float)))


def spa_inputs(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[SpaHuman, np.ndarray]]:
    """(the data set's ``SpaHuman``, metric segment matrix); None without both."""
    human = spa_human(data)
    return None if seg is None or human.signs is None else (human, seg)


def _correlation(method: str, by_item: bool) -> Callable[[np.ndarray, np.ndarray], float]:
    return lambda human, metric: stats.correlation(human, metric, method, by_item=by_item)


WMT22_MEASURES: Tuple[Measure, ...] = (
    Measure("system", "pearson", system_scores, stats.CORRELATIONS["pearson"]),
    Measure("system", "accuracy", system_scores, stats.pairwise_accuracy),
    Measure("system", "spa", spa_inputs, lambda human, metric: human.spa(metric)),
    Measure("segment", "pearson", segment_scores, _correlation("pearson", False)),
    Measure("segment", "pearson-item", segment_scores, _correlation("pearson", True)),
    Measure("segment", "kendall", segment_scores, _correlation("kendall", False)),
    Measure("segment", "kendall-item", segment_scores, _correlation("kendall", True)),
    Measure("segment", "acc-t", segment_scores, lambda human, metric: stats.acc_t(human, metric)[0]),
    Measure("segment", "acc-t-epsilon", segment_scores, lambda human, metric: stats.acc_t(human, metric)[1]),
)


def darr_outcome_inputs(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray]]:
    """The metric's +1 / 0 (tie) / -1 outcome on each daRR pair of the data set (the loader's pairs,
    else ``EvalSet.darr_pairs()``): better system's score against the worse one's, same item; None
    without metric segment scores."""
    if seg is None:
        return None
    item, better, worse = data.derived("darr", data.darr_pairs)
    return (darr_outcomes(seg[better, item].tolist(), seg[worse, item].tolist()),)


def _metric_ties(outcomes: np.ndarray, ties: str) -> float:
    return float(np.mean(outcomes == 0))


# WMT17-21 daRR: Kendall's tau-like (the ties rule a run setting) with bootstrap intervals over pairs,
# and the share of pairs the metric ties.
DARR_MEASURES: Tuple[Measure, ...] = (
    Measure(
        "segment",
        "tau",
        darr_outcome_inputs,
        lambda outcomes, ties: tau_from_outcomes(outcomes, ties),
        "bootstrap",
        ("ties",),
        top_k=True,
    ),
    Measure("segment", "metric-ties", darr_outcome_inputs, _metric_ties, uses=("ties",), top_k=True),
)
