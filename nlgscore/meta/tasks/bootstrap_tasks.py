"""SummEval as a library: summary-level correlations per aspect -> a result table.

The task takes metric specs (scored here: ``chrf``, ``bleu``, ``sentbleu``, ``rouge1/2/L`` or any
``nlgscore.load`` spec such as ``bertscore:minilm``) and/or precomputed score files
(``scores={name: path}``, formats in ``nlgscore.meta.data.precomputed``) and returns a ``MetaTable``:
one ``Row`` per data set x metric x level x measure (with bootstrap 95% CIs), plus notes (counts,
checks, paired significance lines). ``nlgscore meta`` only parses arguments and prints these.

"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from nlgscore.core.errors import ArgumentError
from nlgscore.meta.data import loaders, precomputed
from nlgscore.meta.data.mtme import write_mtme
from nlgscore.meta.engine import Scorers, short_name
from nlgscore.meta.report import Row
from nlgscore.meta.stats.resample import DEFAULT_SEED
from nlgscore.meta.stats.summary import DOCUMENT_CORRELATIONS, per_document_correlations
from nlgscore.meta.tasks.runner import (
    MetaTable,
    Run,
    check_limit,
    check_names,
    keep_finished,
    sources_of,
)

PathLike = Union[str, "os.PathLike[str]"]
SUMMEVAL_FILE = "sum-summeval.jsonl"


def _combine(scores: np.ndarray, how: str) -> np.ndarray:
    if how == "first":
        return scores[..., 0]
    return {"max": np.max, "mean": np.mean}[how](scores, axis=-1)


def _nanmean(values: np.ndarray) -> float:
    return float(np.nanmean(values)) if np.any(~np.isnan(values)) else float("nan")


def _summeval_system_rows(human: Dict[str, np.ndarray], aspects: Sequence[str], metric: np.ndarray, n_docs: int,
                          name: str, signature: str) -> List[Row]:
    """System level: per aspect, each system's mean human score over the documents against its mean
    metric score (SummEval's system-level protocol, Fabbri et al. 2021); NaN when either is constant."""
    system_metric = metric.mean(axis=0)
    rows = []
    for aspect in aspects:
        system_human = human[aspect][:n_docs].mean(axis=0)
        for method in ("pearson", "spearman", "kendall"):
            value = DOCUMENT_CORRELATIONS[method](system_human, system_metric) if np.ptp(system_human) and np.ptp(system_metric) else float("nan")
            rows.append(Row(dataset=f"summeval-{aspect}", metric=name, level="system", measure=method, value=float(value),
                            signature=f"{signature}|system:mean-of-documents"))
    return rows


def summeval(
    data_dir: Optional[PathLike] = None, metrics: Sequence[str] = (), scores: Optional[Mapping[str, PathLike]] = None,
    *, aspects: Optional[Sequence[str]] = None, refs: str = "max", bootstrap: int = 1000, seed: int = DEFAULT_SEED,
    limit: Optional[int] = None, progress: bool = False, load_options: Optional[Dict[str, Any]] = None,
    scorers: Optional[Scorers] = None, export_scores: Optional[PathLike] = None,
) -> MetaTable:
    """SummEval summary-level Spearman and Kendall per aspect (BARTScore protocol).

    Per document, the correlation across the systems' summaries; averaged over documents whose
    human and metric scores are not constant. A metric is scored against each reference and
    combined by ``refs`` (``max``, ``mean`` or ``first``). ``scores`` maps a name to a JSONL file
    of ``{"id", "system", "score"}``. Significance: paired bootstrap over documents (Spearman).
    """
    if refs not in ("max", "mean", "first"):
        raise ArgumentError(f"refs must be 'max', 'mean' or 'first' (--refs), got {refs!r}")
    run, sources, limit = Run(bootstrap, seed, progress), sources_of(metrics, scores), check_limit(limit)
    scorers = scorers or Scorers(load_options)
    data = loaders.load_summeval(loaders.data_file(SUMMEVAL_FILE, data_dir))
    n_docs = min(len(data.ids), limit or len(data.ids))
    run.check_items(n_docs, "document(s)", limit)
    aspects = check_names(aspects, "aspects") or sorted(data.human)
    unknown = [a for a in aspects if a not in data.human]
    if unknown:
        raise ArgumentError(f"unknown aspect(s) {unknown} (--aspect); SummEval has {sorted(data.human)}")
    n_refs = 1 if refs == "first" else min(len(data.refs[d]) for d in range(n_docs))
    hyps, ref_texts, srcs = [], [], []
    for d in range(n_docs):
        for text in data.texts[d]:
            for ref in data.refs[d][:n_refs]:
                hyps.append(text), ref_texts.append(ref), srcs.append(data.srcs[d])
    table = MetaTable("summeval")
    per_doc: Dict[str, Dict[str, np.ndarray]] = {aspect: {} for aspect in aspects}
    with keep_finished(table, run, sources):
        for name, path in run.each(sources, lambda name: f"summeval: {name} ({n_docs} documents x "
                                                         f"{len(data.systems)} systems x {n_refs} refs)"):
            if path is None:
                flat, signature = scorers.score(name, hyps, ref_texts, srcs)
                metric = _combine(np.array(flat).reshape(n_docs, len(data.systems), n_refs), refs)
                signature = f"{signature}|refs:{refs}"
                if export_scores is not None:  # items are documents; a system's score is its mean over them
                    write_mtme(export_scores, name, None if refs == "first" else f"{refs}", dict(zip(data.systems, metric.T.tolist())),
                               dict(zip(data.systems, metric.mean(axis=0).tolist())))
            else:
                metric = precomputed.read_summeval_scores(path, data.ids, data.systems)[:n_docs]
                signature = f"scores:{Path(path).name}"
            name = short_name(name)
            for aspect, method in itertools.product(aspects, ("spearman", "kendall")):
                correlations = per_document_correlations(data.human[aspect][:n_docs], metric, method)
                if method == "spearman":
                    per_doc[aspect][name] = correlations
                kept = correlations[~np.isnan(correlations)]
                if kept.size == 0:
                    raise ArgumentError(f"{name}: every document has constant human or metric scores ({aspect})")
                table.rows.append(run.row(_nanmean, (kept,), dataset=f"summeval-{aspect}", metric=name,
                                          level="summary", measure=method, signature=signature))
            table.rows += _summeval_system_rows(data.human, aspects, metric, n_docs, name, signature)
    table.notes.append(f"summeval: {n_docs} documents x {len(data.systems)} systems")
    for aspect in aspects:
        table.notes += run.beaten(per_doc[aspect], _nanmean, f"summeval-{aspect} Spearman")
    return table


