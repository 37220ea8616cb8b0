"""SummEval on the generic runner: summary-level correlations per aspect (BARTScore protocol).

The data set is one ``EvalSet`` (16 systems x documents, the references of each document, one
human level per aspect). A metric is scored against each reference and combined by ``refs``
(``max``, ``mean`` or ``first``). Rows per aspect (``summeval-<aspect>``): ``summary``
``spearman`` and ``kendall`` (per document across systems, then averaged over the documents whose
human and metric scores are not constant; bootstrap intervals over documents), and ``system``
``pearson`` / ``spearman`` / ``kendall`` of the systems' mean scores (SummEval's system level,
Fabbri et al. 2021). Notes: paired bootstrap between metrics' per-document Spearman.

>>> DESCRIPTION.format(n=3, systems=16)
'summeval: 3 documents x 16 systems'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError
from nlgscore.meta.data import loaders, precomputed
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.stats.summary import DOCUMENT_CORRELATIONS, per_document_correlations
from nlgscore.meta.tasks.generic import BARTSCORE_SEGMENT, Scores, TaskDescriptor, run
from nlgscore.meta.tasks.measures import Measure
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import (
    MetaTable,
    Run,
    check_names,
    sources_of,
)

PathLike = Union[str, "os.PathLike[str]"]
SUMMEVAL_FILE = "sum-summeval.jsonl"
REFS_RULES = ("max", "mean", "first")
DESCRIPTION = "summeval: {n} documents x {systems} systems"
# How a metric's scores against the several references of a document become one: (..., refs) -> (...)
COMBINE = {"first": lambda s: s[..., 0], "max": lambda s: np.max(s, axis=-1), "mean": lambda s: np.mean(s, axis=-1)}


def load_summeval_set(data: Optional[PathLike] = None, limit: Optional[int] = None, refs: str = "max") -> EvalSet:
    """The first ``limit`` documents of ``sum-summeval.jsonl`` as an ``EvalSet``: one reference set per
    reference every document has (only the first with ``refs="first"``), one human level per aspect."""
    summ = loaders.load_summeval(loaders.data_file(SUMMEVAL_FILE, data))
    n = min(len(summ.ids), limit or len(summ.ids))
    n_refs = 1 if refs == "first" else min(len(summ.refs[d]) for d in range(n))
    evalset = EvalSet(
        "summeval",
        summ.systems,
        [[summ.texts[d][s] for d in range(n)] for s in range(len(summ.systems))],
        [[summ.refs[d][k] for d in range(n)] for k in range(n_refs)],
        summ.srcs[:n],
        {aspect: scores[:n].T for aspect, scores in summ.human.items()},
        "" if refs == "first" else str(refs),
        lines=len(summ.ids),
    )
    evalset.derived("ids", lambda: summ.ids)
    evalset.notes.append(DESCRIPTION.format(n=n, systems=len(summ.systems)))
    return evalset


def _by_document(data: EvalSet, aspect: str, seg: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    # (documents, systems), C-contiguous as the BARTScore code holds them: the same summation order
    return np.ascontiguousarray(np.asarray(data.human[aspect]).T), np.ascontiguousarray(seg.T)


def _nanmean(values: np.ndarray) -> float:
    return float(np.nanmean(values)) if np.any(~np.isnan(values)) else float("nan")


def document_correlations(aspect: str, method: str):
    """The inputs of a summary-level row: the defined per-document correlations (bootstrap over documents)."""

    def inputs(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray]]:
        if seg is None:  # a score file of system scores: no summary-level rows
            return None
        correlations = per_document_correlations(*_by_document(data, aspect, seg), method)
        kept = correlations[~np.isnan(correlations)]
        if kept.size == 0:
            raise ArgumentError(f"every document has constant human or metric scores ({aspect})")
        return (kept,)

    return inputs


def system_means(aspect: str):
    """Each system's mean human and metric score over the documents (SummEval's system level)."""

    def inputs(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        if seg is None:
            return None
        human, metric = _by_document(data, aspect, seg)
        return human.mean(axis=0), metric.mean(axis=0)

    return inputs


def _system_correlation(method: str):
    def statistic(human: np.ndarray, metric: np.ndarray) -> float:  # NaN when either side is constant
        return float(DOCUMENT_CORRELATIONS[method](human, metric)) if np.ptp(human) and np.ptp(metric) else float("nan")

    return statistic


def measures(aspects: Sequence[str]) -> Tuple[Measure, ...]:
    """The rows of ``aspects``: summary Spearman/Kendall (bootstrap), then system Pearson/Spearman/Kendall."""
    summary = [
        Measure(
            "summary",
            method,
            document_correlations(aspect, method),
            _nanmean,
            "bootstrap",
            dataset=f"summeval-{aspect}",
        )
        for aspect in aspects
        for method in ("spearman", "kendall")
    ]
    system = [
        Measure(
            "system",
            method,
            system_means(aspect),
            _system_correlation(method),
            dataset=f"summeval-{aspect}",
            signature="|system:mean-of-documents",
        )
        for aspect in aspects
        for method in ("pearson", "spearman", "kendall")
    ]
    return (*summary, *system)


def read_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """JSONL ``{"id", "system", "score"}`` per (document, system)."""
    seg = precomputed.read_summeval_scores(path, data.derived("ids", lambda: []), data.systems)[: data.items].T
    return seg, seg.mean(axis=1), f"scores:{Path(path).name}"


def significance(aspects: Sequence[str]):
    """Paired bootstrap between metrics' per-document Spearman, per aspect."""

    def notes(
        data: EvalSet,
        kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]],
        table: MetaTable,
        task: Run,
        permutations: int,
    ) -> List[str]:
        lines = []
        for aspect in aspects:
            per_doc = {
                name: per_document_correlations(*_by_document(data, aspect, seg), "spearman")
                for name, (seg, _) in kept.items()
                if seg is not None  # a metric of system scores only has no summary-level test
            }
            lines += task.beaten(per_doc, _nanmean, f"summeval-{aspect} Spearman")
        return lines

    return notes


# the run settings summeval reads (``RunOptions`` fields): every task's and these
SUMMEVAL_READS = EVERY_TASK + ("bootstrap", "export_scores")


def summeval(
    data_dir: Optional[PathLike] = None,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, PathLike]] = None,
    *,
    aspects: Optional[Sequence[str]] = None,
    refs: str = "max",
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """SummEval summary-level Spearman and Kendall per aspect (BARTScore protocol).

    Per document, the correlation across the systems' summaries; averaged over documents whose
    human and metric scores are not constant. A metric is scored against each reference and
    combined by ``refs`` (``max``, ``mean`` or ``first``). ``scores`` maps a name to a JSONL file
    of ``{"id", "system", "score"}``. Significance: paired bootstrap over documents (Spearman).
    ``options`` (or its fields as keywords, ``settings``; ``bootstrap`` 1000 by default then):
    ``lower_is_better``, metric names whose scores are negated first (error rates).
    The generic runner over a descriptor of the chosen aspects.
    """
    if refs not in REFS_RULES:
        raise ArgumentError(f"refs must be 'max', 'mean' or 'first' (--refs), got {refs!r}")
    opts = RunOptions.given(options, settings, "summeval", SUMMEVAL_READS, bootstrap=1000)
    sources_of(metrics, scores)  # before reading the data
    evalset = load_summeval_set(data_dir, opts.limit, refs)
    aspects = check_names(aspects, "aspects") or sorted(evalset.human)
    unknown = [a for a in aspects if a not in evalset.human]
    if unknown:
        raise ArgumentError(f"unknown aspect(s) {unknown} (--aspect); SummEval has {sorted(evalset.human)}")
    task = TaskDescriptor(
        "summeval",
        lambda data, limit=None: evalset,
        measures(aspects),
        read_scores,
        BARTSCORE_SEGMENT,
        significance=significance(aspects),
        bootstrap_items="document(s)",
        system_level=False,
        combine=COMBINE[refs],
        scored=f"|refs:{refs}",
        progress="summeval: {metric} ({items} documents x {systems} systems x {refs} refs)",
    )
    return run(task, metrics, scores, options=opts)
