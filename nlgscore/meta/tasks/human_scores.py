"""Meta-evaluation on a human-scores folder (MQM, DA, ...) as the WMT22-25 metrics tasks do it.

``mqm(folder, metrics=["chrf"], scores={"mine": "mine-refA.seg.score"})`` returns a ``MetaTable``:

* system level: ``pearson``, ``accuracy`` (pairwise), ``spa`` (soft pairwise accuracy);
* segment level: ``pearson``, ``kendall`` (no grouping), ``pearson-item``, ``kendall-item``
  (grouped by source segment), ``acc-t`` and ``acc-t-epsilon`` (tie-calibrated acc_eq);
* notes: the data, and significance clusters (ranks) from permutation tests between metrics.

WMT conventions (mt-metrics-eval ``data.py``): a system's human score is the mean over its rated
segments (the folder's ``<kind>-sys-scores.tsv`` when present); its metric score is over the whole
test set (sacreBLEU corpus chrF/BLEU for those two, the mean of segment scores for every other
metric); segment-level ``bleu`` is WMT's baseline since WMT21, sacreBLEU's ``sentence_bleu``
(``nlgscore.meta.baselines.WMT22_SEGMENT``), not the BARTScore paper's Moses-tokenised ``sentbleu``;
human translations are left out unless ``include_human``; the reference in use is never a
system. Statistics: ``nlgscore.meta.stats``.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> refs = ["the cat sat on the mat", "a dog ran in the park"]
>>> outputs = {"A": ["the cat sat on a mat", "a dog ran in a park"], "B": ["the cat sat", "a dog ran"],
...            "C": ["cat", "dog"], "refA": refs}
>>> _ = (folder / "src.xx").write_text("s1\\ns2\\n"); _ = (folder / "ref.A.en").write_text("\\n".join(refs) + "\\n")
>>> for name, lines in outputs.items():
...     _ = (folder / f"hyp.{name}.en").write_text("\\n".join(lines) + "\\n")
>>> rows = [f"{s}\\t{k}\\t{q - k}" for s, q in (("A", 0), ("B", -2), ("C", -5), ("refA", 0)) for k in (1, 2)]
>>> _ = (folder / "mqm-seg-scores.tsv").write_text("\\n".join(rows) + "\\n")
>>> table = mqm(folder, ["chrf"], permutations=0)
>>> [(r.level, r.measure, round(r.value, 3)) for r in table.rows][:3]  # refA equals ref.A: never a system
[('system', 'pearson', 1.0), ('system', 'accuracy', 1.0), ('system', 'spa', 1.0)]
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.core.errors import ArgumentError, DataError
from nlgscore.meta import stats
from nlgscore.meta.baselines import WMT22_SEGMENT
from nlgscore.meta.data.mtme import read_mtme, write_mtme
from nlgscore.meta.data.precomputed import segment_and_system
from nlgscore.meta.data.ratings import RatingsFolder, load_ratings
from nlgscore.meta.engine import Scorers, short_name
from nlgscore.meta.report import Row
from nlgscore.meta.stats.resample import DEFAULT_SEED, check_resamples
from nlgscore.meta.tasks.runner import (
    MetaTable,
    Run,
    check_limit,
    keep_finished,
    sources_of,
)

PathLike = Union[str, "os.PathLike[str]"]
# (level, measure) -> how it is computed; the order of the table's rows.
MEASURES = (("system", "pearson"), ("system", "accuracy"), ("system", "spa"), ("segment", "pearson"),
            ("segment", "pearson-item"), ("segment", "kendall"), ("segment", "kendall-item"),
            ("segment", "acc-t"), ("segment", "acc-t-epsilon"))


class _Human:
    """The human side of one run: segment matrix, system scores, the SPA columns and signs."""

    def __init__(self, data: RatingsFolder, systems: List[str], n: int, use_sys_file: bool) -> None:
        self.seg = np.array([data.seg[s][:n] for s in systems])
        rated = ~np.isnan(self.seg)
        if not rated.any(axis=1).all():
            empty = [s for s, r in zip(systems, rated.any(axis=1)) if not r]
            raise DataError(f"{data.path}: system(s) {empty} have no rated segment in the first {n} lines")
        self.sys = np.array([data.sys[s] if use_sys_file else float(np.nanmean(data.seg[s][:n])) for s in systems])
        self.common = rated.all(axis=0)  # SPA compares systems on the segments every one was rated on
        self.signs = stats.permutation_signs(int(self.common.sum())) if self.common.any() else None
        self.p_values = stats.pairwise_p_values(self.seg[:, self.common], self.signs) if self.common.any() else None

    def spa(self, metric: np.ndarray) -> float:
        """SPA of a metric's ``(systems, segments)`` scores (the human p-values are computed once)."""
        return stats.spa_from_p_values(self.p_values, stats.pairwise_p_values(metric[:, self.common], self.signs))


def _metric_rows(human: _Human, seg: Optional[np.ndarray], system: np.ndarray, **common: str) -> Tuple[List[Row], Dict[str, Any]]:
    """The rows of one metric and what the significance tests need."""
    values: Dict[Tuple[str, str], float] = {
        ("system", "pearson"): stats.CORRELATIONS["pearson"](human.sys, system),
        ("system", "accuracy"): stats.pairwise_accuracy(human.sys, system),
    }
    keep: Dict[str, Any] = {"system": system}
    if seg is not None:
        if human.signs is not None:
            values[("system", "spa")] = human.spa(seg)
        for method in ("pearson", "kendall"):
            values[("segment", method)] = stats.correlation(human.seg, seg, method)
            values[("segment", f"{method}-item")] = stats.correlation(human.seg, seg, method, by_item=True)
        pairs = stats.item_pairs(human.seg, seg)
        values[("segment", "acc-t")], epsilon = stats.tie_calibration(pairs)
        values[("segment", "acc-t-epsilon")] = epsilon
        keep.update(seg=seg, pairs=pairs, epsilon=epsilon)
    rows = [Row(level=level, measure=measure, value=float(values[level, measure]), **common)
            for level, measure in MEASURES if (level, measure) in values]
    return rows, keep


def _significance(human: _Human, kept: Dict[str, Dict[str, Any]], table: MetaTable, dataset: str,
                  resamples: int, seed: int) -> List[str]:
    """Cluster ranks per measure from pairwise permutation tests (mtme CompareMetrics + AssignRanks)."""
    value = {(r.metric, r.level, r.measure): r.value for r in table.rows if r.dataset == dataset}
    rated = ~np.isnan(human.seg)
    every_system = np.ones(len(human.sys), bool)
    tests = {  # measure -> (statistic of one metric's scores, which scores, the cells resampled)
        ("system", "pearson"): (lambda v: stats.CORRELATIONS["pearson"](human.sys, v), "system", every_system),
        ("system", "accuracy"): (lambda v: stats.pairwise_accuracy(human.sys, v), "system", every_system),
        ("system", "spa"): (human.spa, "seg", rated),
        ("segment", "pearson"): (lambda m: stats.correlation(human.seg, m), "seg", rated),
    }
    lines = []
    for level, measure in (*tests, ("segment", "acc-t")):
        names = [m for m in kept if (m, level, measure) in value and (measure != "acc-t" or "pairs" in kept[m])]
        if len(names) < 2:
            continue
        names.sort(key=lambda m: (-value[m, level, measure], m))
        p = np.zeros((len(names), len(names)))
        for i, j in itertools.combinations(range(len(names)), 2):
            a, b = kept[names[i]], kept[names[j]]
            if measure == "acc-t":  # each metric's pairwise outcomes at its own epsilon (WMT23/24 "pairs" test)
                outcomes = [stats.pair_outcomes(m["pairs"], m["epsilon"]) for m in (a, b)]
                p[i, j] = stats.pairs_permutation_test(*outcomes, a["pairs"].weight, resamples, seed)
            else:
                statistic, key, mask = tests[level, measure]
                p[i, j] = stats.permutation_test(statistic, a[key], b[key], mask, resamples, seed)
        ranks = stats.cluster_ranks(p)
        lines.append(f"  {level} {measure}: " + ", ".join(f"{n} {r}" for n, r in zip(names, ranks)))
    if lines:
        lines.insert(0, f"  significance clusters (rank 1 = best; permutation tests, {resamples} resamples, "
                        f"seed {seed}, p < {stats.SIG_LEVEL}):")
    return lines


def _file_scores(name: str, path: Any, data: RatingsFolder, systems: List[str], n: int) -> Tuple[Optional[np.ndarray], np.ndarray, str]:
    seg_path, sys_path = segment_and_system(name, path)
    seg, system = read_mtme(seg_path, systems, len(data.src), first=n)
    if sys_path is not None:
        _, system = read_mtme(sys_path, systems, 0)
    signature = f"scores:{Path(seg_path).name}"
    if seg is not None:
        seg = seg[:, :n]
    if system is None:
        if seg is None:
            raise DataError(f"{seg_path}: neither segment nor system scores")
        return seg, seg.mean(axis=1), f"{signature}|system:mean-of-segments"
    return seg, system, f"{signature}|system:{Path(sys_path or seg_path).name}"


def _export(folder: Optional[PathLike], name: str, reference: str, systems: List[str], seg: np.ndarray,
            system: np.ndarray) -> None:
    if folder is not None:
        write_mtme(folder, name, reference, {s: seg[i].tolist() for i, s in enumerate(systems)},
                   dict(zip(systems, system.tolist())))


def mqm(
    folder: PathLike, metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, *,
    reference: Optional[str] = None, kind: Optional[str] = None, include_human: bool = False, repeats: str = "error",
    permutations: int = stats.SIG_RESAMPLES, seed: int = DEFAULT_SEED, limit: Optional[int] = None,
    progress: bool = False, load_options: Optional[Dict[str, Any]] = None, scorers: Optional[Scorers] = None,
    export_mtme: Optional[PathLike] = None, export_scores: Optional[PathLike] = None,
) -> MetaTable:
    """Every WMT22-25 measure of each metric on the human-scores ``folder`` (layout: ``nlgscore.meta.data.ratings``).

    ``metrics`` are specs scored here; ``scores`` maps a name to an mt-metrics-eval score file
    (``<system><TAB><score>``: a ``.seg.score`` file, with its ``.sys.score`` sibling when present,
    or ``"SEG,SYS"``). ``permutations``: resamples of the significance tests between metrics (0: none).
    ``export_mtme`` / ``export_scores``: a folder to write the scored metrics' scores to as mtme
    files (the command line's ``--export-scores`` adds nlgscore's JSONL through ``Scorers.export``).
    """
    if folder is None:
        raise ArgumentError("folder is required: the human-scores folder to evaluate on (--data FOLDER)")
    run, sources, limit = Run(0, seed, progress), sources_of(metrics, scores, system_files=True), check_limit(limit)
    permutations = check_resamples(permutations, "permutations", "--permutations")
    scorers = scorers or Scorers(load_options)
    data = load_ratings(folder, reference, kind, repeats)
    systems = data.systems(include_human)
    if len(systems) < 3:
        raise DataError(f"{data.path}: meta-evaluation needs at least 3 rated systems, got {systems}")
    n = min(len(data.src), limit or len(data.src))
    human = _Human(data, systems, n, use_sys_file=limit is None or limit >= len(data.src))
    hyps = [h for s in systems for h in data.hyps[s][:n]]
    dataset = f"{data.kind}-{data.lp}"
    table = MetaTable("mqm")
    kept: Dict[str, Dict[str, Any]] = {}
    with keep_finished(table, run, sources):
        for name, file in run.each(sources, lambda name: f"{dataset}: {name} ({len(systems)} systems x {n} segments)"):
            if file is None:
                segment_spec = WMT22_SEGMENT.get(name.lower(), name)  # bleu: sacreBLEU sentence_bleu (WMT21+)
                flat, signature = scorers.score(segment_spec, hyps, data.ref[:n] * len(systems), data.src[:n] * len(systems))
                seg = np.array(flat).reshape(len(systems), n)
                system, how = scorers.system_scores(name, [data.hyps[s][:n] for s in systems], data.ref[:n], seg)
                system, signature = np.array(system), f"{signature}|{how}"
                for target in (export_mtme, export_scores):
                    _export(target, name, data.reference, systems, seg, system)
            else:
                seg, system, signature = _file_scores(name, file, data, systems, n)
            rows, kept[short_name(name)] = _metric_rows(human, seg, system, dataset=dataset, metric=short_name(name),
                                                        signature=signature)
            table.rows += rows
    excluded = sorted(set(data.hyps) - set(systems))
    table.notes.append(f"{dataset} ({data.path.name}): {n} segments, {int((~np.isnan(human.seg)).any(axis=0).sum())} "
                       f"rated, {len(systems)} systems; reference {data.reference}; not scored as systems: "
                       f"{', '.join(excluded) or 'none'}; SPA on {int(human.common.sum())} segments rated for every system")
    if permutations > 0:
        table.notes += _significance(human, kept, table, dataset, permutations, seed)
    return table
