"""The WMT24 and WMT25 metrics tasks as mt-metrics-eval defines them (``tasks.WMT24``, ``tasks.WMT25``).

Per language pair, two tasks: system-level **soft pairwise accuracy** (SPA = 1 - PCE, from the
segment matrices, ``pce.py``'s 1000 permutations with seed 4) and segment-level **acc-eq**
(``KendallWithTiesOpt``, variant ``acc23``, grouped by item, tie-calibrated with sample rate 1).
Each gets significance clusters from permutation tests between metrics (``PermutationSigDiff``
for SPA, ``PairwisePermutationSigDiff`` for acc-eq; early stopping as mtme). The pairs combine into
**avg-corr** (every task mapped to [0, 1] by its measure's range, equal weights; clusters from the
tasks' averaged draws) and the **average rank** (mean cluster rank). Also reported per pair:
**Pairwise Difference Pearson** (``pdp``), and acc-eq's calibrated epsilon.

Rows: per pair (data set ``wmt24-en-cs`` ...) ``system spa``, ``segment acc-eq``,
``segment acc-eq-epsilon``, ``segment pdp``; overall (data set ``all``) ``overall avg-corr`` and
``overall avg-rank`` for the metrics evaluated on every pair. A PDP that is undefined (constant
human scores on a pair: :func:`~nlgscore.meta.stats.pairwise.pdp_undefined`) is NaN (``null`` in
JSON, ``n/a`` in the text table) with a note and a warning naming the pair.

>>> import numpy as np
>>> [f"{m.level} {m.name}" for m in WMT_MEASURES]
['system spa', 'segment acc-eq', 'segment acc-eq-epsilon', 'segment pdp']
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta import stats
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.mtme import read_mtme
from nlgscore.meta.data.precomputed import segment_and_system
from nlgscore.meta.data.wmt_sets import load_wmt, pairs_in
from nlgscore.meta.report import Row
from nlgscore.meta.stats.avg_corr import average_ranks, avg_corr, avg_corr_clusters
from nlgscore.meta.tasks.generic import Scores, TaskDescriptor, run
from nlgscore.meta.tasks.measures import Measure, segment_matrix, segment_scores, spa_human, spa_inputs
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import MetaTable, Run, keep_finished, sources_of

PathLike = Union[str, "os.PathLike[str]"]
AVERAGED = (("system", "spa"), ("segment", "acc-eq"))  # the tasks of mtme's WMT24/WMT25 task sets
RANGES = {"spa": (0.0, 1.0), "acc-eq": (0.0, 1.0)}  # TaskResults.range: pce and acc23 are accuracies

WMT_MEASURES: Tuple[Measure, ...] = (
    Measure("system", "spa", spa_inputs, lambda human, metric: human.spa(metric)),
    Measure("segment", "acc-eq", segment_scores, lambda human, metric: stats.acc_t(human, metric)[0]),
    Measure("segment", "acc-eq-epsilon", segment_scores, lambda human, metric: stats.acc_t(human, metric)[1]),
    Measure("segment", "pdp", segment_scores, stats.pairwise_difference_pearson),
)


def _load(data: Any, limit: Optional[int] = None, **options: Any) -> EvalSet:
    evalset = load_wmt(data, limit=limit, **options)
    evalset.derived("lp", lambda: options.get("lp"))
    return evalset


def read_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """A metric's segment scores from an mt-metrics-eval ``.seg.score`` file: one line per line of
    the test set (mtme's ``metric-scores/<LP>/``), or per scored item (``--export-scores``' files);
    ``{lp}`` in the path names the pair's file when several pairs are evaluated."""
    seg_path, _ = segment_and_system(name, path)
    seg_path = str(seg_path).replace("{lp}", str(data.derived("lp", lambda: "")))
    items = np.asarray(data.derived("lines", lambda: np.arange(data.items)))
    total = int(data.derived("total", lambda: int(items.max()) + 1 if items.size else 0))
    seg, _ = read_mtme(seg_path, data.systems, total, first=len(items))
    if seg is None:
        raise DataError(f"{seg_path}: one score per system; the WMT24/25 measures need segment scores")
    if seg.shape[1] != len(items):
        seg = seg[:, items]
    return seg, seg.mean(axis=1), f"scores:{Path(seg_path).name}"


def _significance(
    collector: Dict[str, Any],
    data: EvalSet,
    kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]],
    table: MetaTable,
    task: Run,
    resamples: int,
) -> List[str]:
    """Per averaged measure: values, cluster ranks and permutation draws (kept for avg-corr)."""
    value = {(r.metric, r.level, r.measure): r.value for r in table.rows if r.dataset == data.name}
    human = np.asarray(data.human["segment"], dtype=float)
    rated = ~np.isnan(human)
    calibrated: Dict[str, Tuple[stats.ItemPairs, float]] = {}
    lines = []
    for level, measure in AVERAGED:
        names = sorted((m for m in kept if (m, level, measure) in value), key=lambda m: (-value[m, level, measure], m))
        if not names:
            continue
        draws: Dict[Tuple[str, str], List[float]] = {}
        p = np.zeros((len(names), len(names)))  # no test (0 resamples): every gap counts, as mtme with k=0
        for i, j in itertools.combinations(range(len(names)), 2) if resamples > 0 else ():
            record = draws.setdefault((names[i], names[j]), [])
            if measure == "acc-eq":
                for name in (names[i], names[j]):
                    if name not in calibrated:
                        pairs = stats.item_pairs(human, segment_matrix(kept[name][0], name))
                        calibrated[name] = (pairs, stats.tie_calibration(pairs)[1])
                (pa, ea), (pb, eb) = calibrated[names[i]], calibrated[names[j]]
                p[i, j] = stats.pairs_permutation_test(
                    stats.pair_outcomes(pa, ea),
                    stats.pair_outcomes(pb, eb),
                    pa.weight,
                    resamples,
                    task.seed,
                    draws=record,
                )
            else:
                p[i, j] = stats.permutation_test(
                    spa_human(data).spa,
                    segment_matrix(kept[names[i]][0], names[i]),
                    segment_matrix(kept[names[j]][0], names[j]),
                    rated,
                    resamples,
                    task.seed,
                    draws=record,
                )
        ranks = stats.cluster_ranks(p)
        collector[f"{data.name} {measure}"] = (
            {n: value[n, level, measure] for n in names},
            dict(zip(names, ranks)),
            draws,
        )
        if resamples > 0:
            lines.append(
                f"  {data.name} {level} {measure} clusters: " + ", ".join(f"{n} {r}" for n, r in zip(names, ranks))
            )
    return lines


# What an undefined PDP's note says of each cause (stats.pdp_undefined).
_UNDEFINED_PDP = {
    "human": "the human scores are constant (every rated system has the same score on each item), so every "
    "human difference is 0",
    "metric": "the metric gives every system the same score on each item, so every metric difference is 0",
    "pairs": "fewer than two rated pairs of systems",
}


def _undefined_pdp(
    data: EvalSet, kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]], table: MetaTable
) -> List[str]:
    """A note (the table's footnote to its ``n/a``) and a warning for each cause of an undefined
    PDP on ``data``, naming the pair and the metrics: a NaN alone would pass for a result."""
    undefined = [r.metric for r in table.rows if r.dataset == data.name and r.measure == "pdp" and math.isnan(r.value)]
    human = np.asarray(data.human["segment"], dtype=float)
    causes: Dict[str, List[str]] = {}
    for metric in undefined:
        seg = kept[metric][0]
        cause = stats.pdp_undefined(human, seg) if seg is not None else None
        causes.setdefault(cause or "pairs", []).append(metric)
    notes = []
    for cause, metrics in causes.items():
        text = (
            f"{data.name} segment pdp is undefined for {', '.join(metrics)}: {_UNDEFINED_PDP[cause]}; a Pearson "
            "correlation with a constant side has no value (mt-metrics-eval leaves it out as NaN), so it is "
            "reported as n/a, not as 0"
        )
        warnings.warn(text, UserWarning, stacklevel=2)
        notes.append(f"n/a: {text}")
    return notes


def _dataset_notes(
    collector: Dict[str, Any], data: EvalSet, kept: Any, table: MetaTable, task: Run, resamples: int
) -> List[str]:
    """The notes of one pair: its undefined values, then its significance clusters."""
    return _undefined_pdp(data, kept, table) + _significance(collector, data, kept, table, task, resamples)


def _overall(table: MetaTable, collector: Dict[str, Any], resamples: int, seed: int) -> None:
    if not collector:
        return
    values = {t: v for t, (v, _, _) in collector.items()}
    ranges = {t: RANGES[t.rsplit(" ", 1)[1]] for t in collector}
    averages = avg_corr(values, ranges)
    ranks = average_ranks({t: r for t, (_, r, _) in collector.items()})
    signature = f"tasks:{len(collector)}|weights:equal|permutations:{resamples}|seed:{seed}"
    clusters = None
    if resamples > 0 and len(averages) > 1:
        clusters, _ = avg_corr_clusters(averages, {t: d for t, (_, _, d) in collector.items()}, ranges)
    for metric, value in averages.items():
        table.rows.append(Row("all", metric, "overall", "avg-corr", value, signature=signature))
    for metric, value in ranks.items():
        table.rows.append(Row("all", metric, "overall", "avg-rank", value, signature=signature))
    header = f"avg-corr over {len(collector)} tasks ({', '.join(collector)}), equal weights"
    table.notes.append(
        header + (f"; clusters from averaged permutation draws (p < {stats.SIG_LEVEL}):" if clusters else ":")
    )
    for k, (metric, value) in enumerate(averages.items()):
        cluster = f"  cluster {clusters[k]}" if clusters else ""
        table.notes.append(
            f"  {metric:<24} avg-corr {value:.4f}  avg-rank {ranks.get(metric, float('nan')):.2f}{cluster}"
        )


# the run settings wmt24 and wmt25 read (``RunOptions`` fields): every task's and these
WMT_READS = EVERY_TASK + ("permutations", "export_mtme", "export_scores", "context", "top_k", "select_model")


def wmt_task(
    test_set: str,
    data: Optional[PathLike],
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, Any]] = None,
    *,
    pairs: Optional[Sequence[str]] = None,
    gold: Optional[str] = None,
    reference: Optional[str] = None,
    include_human: bool = False,
    all_lines: bool = False,
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """The WMT24/WMT25 task set of ``test_set`` on ``data`` (any layout of ``nlgscore.meta.data.wmt_sets``).

    ``pairs``: the language pairs (default: every pair of the data); ``metrics`` are registry specs,
    ``scores`` maps a name to a ``.seg.score`` file (``{lp}`` in it for several pairs).
    ``options`` (or its fields as keywords, ``settings``; ``permutations`` 1000 by default then):
    ``permutations``, resamples of the significance tests (0: none; every rank is then 1);
    ``export_mtme`` / ``export_scores``: folders the scored metrics are written to, one subfolder
    per pair (mtme's ``metric-scores/<LP>/`` layout), over the scored items.
    ``context``: each segment is scored after the previous ``context`` segments of its document
    (the data set's document ids; BERTScore, Prism and BARTScore; any other metric is refused).
    The scored items then include those previous segments, unrated, which no measure counts.
    ``top_k``, ``lower_is_better``, ``select_model``: as :func:`nlgscore.meta.tasks.generic.run`
    (with ``select_model`` the rows are Hits@1, MRR and Diff only: no clusters, no avg-corr).
    """
    if data is None:
        raise ArgumentError("data is required: the WMT folder or JSONL file (--data)")
    opts = RunOptions.given(options, settings, test_set, WMT_READS, permutations=stats.SIG_RESAMPLES).with_scorers()
    task, sources = opts.run(), sources_of(metrics, scores)
    lps = list(pairs) if pairs else pairs_in(data, test_set)
    if not lps:
        raise DataError(f"{data}: no language pair")
    collector: Dict[str, Any] = {}
    descriptor = TaskDescriptor(
        test_set,
        _load,
        WMT_MEASURES,
        read_scores=read_scores,
        significance=functools.partial(_dataset_notes, collector),
        progress=test_set + " {data}: {metric} ({systems} systems x {items} segments)",
        documents=True,
    )
    table = MetaTable(test_set)
    with keep_finished(table, task, sources):
        for lp in lps:
            folders: Dict[str, Any] = {
                k: None if v is None else Path(v) / lp
                for k, v in (("export_mtme", opts.export_mtme), ("export_scores", opts.export_scores))
            }
            run(
                descriptor,
                metrics,
                scores,
                data=data,
                options=dataclasses.replace(opts, **folders),
                into=table,
                task=task,
                lp=lp,
                test_set=test_set,
                gold=gold,
                reference=reference,
                include_human=include_human,
                all_lines=all_lines,
            )
        if opts.select_model is None:
            _overall(table, collector, opts.permutations, opts.seed)
    return table


def wmt24(
    data: Optional[PathLike], metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, **options: Any
) -> MetaTable:
    """mt-metrics-eval's WMT24 task set (``tasks.WMT24``) on ``data``; options as ``wmt_task``."""
    return wmt_task("wmt24", data, metrics, scores, **options)


def wmt25(
    data: Optional[PathLike], metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, **options: Any
) -> MetaTable:
    """mt-metrics-eval's WMT25 task set (``tasks.WMT25``: locale pairs, gold ``esa-human1``) on ``data``."""
    return wmt_task("wmt25", data, metrics, scores, **options)
