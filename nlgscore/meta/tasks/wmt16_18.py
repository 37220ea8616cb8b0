"""WMT16, WMT17 and WMT18 as the WMT18 metrics task runs them, on WMT's metrics-task package.

Per language pair (``nlgscore.meta.data.wmt_package`` reads the package), the rows of the WMT18
findings (Ma, Bojar and Graham 2018):

* ``segment tau``: daRR Kendall's tau-like over ``RR-seglevel.csv``'s pairs, ``(C - D) / (C + D)``,
  a metric tie discordant (WMT17-18; ``ties="exclude"`` as WMT14-16), bootstrap intervals over
  pairs; ``segment metric-ties``: the share of pairs the metric ties.
* ``segment pearson``: Pearson over the translations ``DA-seglevel.csv`` scores (where it has the
  pair; WMT16 and WMT17's segment-level DA), bootstrap intervals.
* ``system pearson``: Pearson with ``DA-syslevel.csv``'s Ave z over the systems it scores.
* ``hybrid pearson``: Pearson over ``hybrids`` hybrid systems (10,000; Graham and Liu 2016) super-
  sampled from the systems' DA segment scores and the metric's segment scores (means of the
  sampled segments, as WMT18 for metrics without a hybrid-level score of their own).

Notes: paired bootstrap between metrics' tau, and the Williams test between metrics' system and
hybrid correlations (absolute, as WMT). ``WMT18_BASELINES`` are the report's baselines as
sacreBLEU computes them (``baselines=True``: ``--baselines``).

>>> sorted(WMT18_BASELINES)
['BLEU', 'TER', 'chrF', 'chrF+', 'sentBLEU']
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.files import read_lines
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.precomputed import segment_and_system
from nlgscore.meta.data.wmt_package import (
    TEST_SETS,
    Package,
    find_package,
    metric_files,
    read_da_seg,
    read_da_sys,
    read_metric_scores,
    read_rr,
)
from nlgscore.meta.stats.correlation import pearson
from nlgscore.meta.stats.wmt import darr_outcomes, hybrid_systems, tau_from_outcomes, williams_test_scores
from nlgscore.meta.tasks.generic import BARTSCORE_SEGMENT, Scores, TaskDescriptor, run
from nlgscore.meta.tasks.measures import Measure
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import SIGNIFICANCE_LEVEL, MetaTable, Run, keep_finished, sources_of
from nlgscore.meta.tasks.select_model import HYBRIDS

PathLike = Union[str, "os.PathLike[str]"]
HYBRID_SEED = 12345  # the hybrids' seed: every metric is correlated over the same hybrid systems
# The WMT18 report's baselines (Sec. 2.2) through sacreBLEU: sentBLEU (Moses-tokenised, smoothed),
# BLEU with mteval's international tokenisation, chrF with beta 3, chrF+ (one word n-gram), TER
# (lowercased, as the report's Moses TER).
WMT18_BASELINES = {
    "sentBLEU": "sentbleu",
    "BLEU": "bleu:intl",
    "chrF": "chrf:beta=3",
    "chrF+": "chrf:beta=3:word_order=1",
    "TER": "ter",
}


@functools.lru_cache(maxsize=8)
def _manual(path: str, mtime: int, kind: str) -> Dict[str, Any]:
    """A manual-evaluation file read once per run (every language pair reads the same file)."""
    readers: Dict[str, Callable[[str], Dict[str, Any]]] = {"rr": read_rr, "da-seg": read_da_seg, "da-sys": read_da_sys}
    return readers[kind](path)


def _read_manual(package: Package, name: str, kind: str) -> Optional[Dict[str, Any]]:
    path = package.manual(name)
    return None if path is None else _manual(str(path), path.stat().st_mtime_ns, kind)


def language_pairs(data: PathLike, test_set: str, pairs: Optional[Sequence[str]]) -> List[str]:
    """``pairs``, else every pair with system outputs in the package."""
    if pairs:
        return list(pairs)
    found = find_package(data, test_set).pairs()
    if not found:
        raise DataError(f"{data}: no system-outputs/{test_set}/<lp>/ folders")
    return found


def load_package_set(data: PathLike, limit: Optional[int] = None, lp: str = "", test_set: str = "") -> EvalSet:
    """Language pair ``lp`` of the package at ``data`` as an ``EvalSet``: every system with an output
    file (hybrids left out); human levels ``segment`` (DA-seglevel, NaN where not judged) and
    ``system`` (DA-syslevel, NaN for a system it does not score) where the package has them; the
    daRR pairs of RR-seglevel as ``derived("rr")``."""
    package = find_package(data, test_set)
    if "-" not in lp:
        raise ArgumentError(f"lp must be a language pair such as de-en, got {lp!r}")
    ref_path = package.text("references", lp)
    refs = read_lines(ref_path)
    try:
        srcs: Optional[List[str]] = read_lines(package.text("sources", lp))
    except DataError:
        srcs = None  # reference-based metrics need no source
    outputs = package.outputs(lp)
    systems = sorted(outputs)
    hyps = []
    for system in systems:
        lines = read_lines(outputs[system])
        if len(lines) != len(refs):
            raise DataError(f"{outputs[system]}: {len(lines)} lines, the reference {ref_path} has {len(refs)}")
        hyps.append(lines)
    if srcs is not None and len(srcs) != len(refs):
        raise DataError(f"{package.text('sources', lp)}: {len(srcs)} lines, the reference has {len(refs)}")
    n = len(refs) if limit is None else min(limit, len(refs))
    row = {s: i for i, s in enumerate(systems)}
    human: Dict[str, np.ndarray] = {}
    notes = []
    da_sys = (_read_manual(package, "DA-syslevel.csv", "da-sys") or {}).get(lp)
    if da_sys:
        human["system"] = np.array([da_sys.get(s, np.nan) for s in systems])
        missing = sorted(set(da_sys) - set(systems))
        if missing:
            notes.append(f"  DA-syslevel scores systems without an output file, left out: {', '.join(missing)}")
    da_seg = (_read_manual(package, "DA-seglevel.csv", "da-seg") or {}).get(lp)
    if da_seg:
        seg = np.full((len(systems), n), np.nan)
        for (system, sid), score in da_seg.items():
            if sid > len(refs):
                raise DataError(f"{package.manual('DA-seglevel.csv')}: {lp} segment {sid} beyond the {len(refs)} lines")
            if system in row and sid <= n:
                seg[row[system], sid - 1] = score
        human["segment"] = seg
    rr = (_read_manual(package, "RR-seglevel.csv", "rr") or {}).get(lp, [])
    items, better, worse = [], [], []
    for pair in rr:
        for system in (pair.better, pair.worse):
            if system not in row:
                raise DataError(f"{pair.where}: system {system!r} has no output file in {package.txt}")
        if pair.sid > len(refs):
            raise DataError(f"{pair.where}: segment {pair.sid} beyond the {len(refs)} lines of {ref_path}")
        if pair.sid <= n:
            items.append(pair.sid - 1)
            better.append(row[pair.better])
            worse.append(row[pair.worse])
    name = f"wmt{test_set[-2:]}-{lp}"
    evalset = EvalSet(name, systems, [h[:n] for h in hyps], [refs[:n]], None if srcs is None else srcs[:n], human)
    evalset.lines = len(refs)
    pairs = tuple(np.array(a, dtype=np.int64) for a in (items, better, worse))
    evalset.derived("rr", lambda: pairs)
    evalset.derived("package", lambda: (package, lp))
    rated = int(np.sum(~np.isnan(human["system"]))) if "system" in human else 0
    evalset.notes.append(
        f"{name}: {n} segments, {len(systems)} systems ({rated} with DA-syslevel scores), "
        f"{len(items)} daRR pairs, {int(np.sum(~np.isnan(human['segment']))) if 'segment' in human else 0} "
        "DA-seglevel scores"
    )
    evalset.notes += notes
    return evalset


def _darr(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray]]:
    item, better, worse = data.derived("rr", lambda: (np.array([], dtype=np.int64),) * 3)
    if seg is None or not item.size:
        return None
    return (darr_outcomes(seg[better, item].tolist(), seg[worse, item].tolist()),)


def _da_segments(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray, ...]]:
    if seg is None or "segment" not in data.human:
        return None
    judged = ~np.isnan(data.human["segment"])
    return (data.human["segment"][judged], seg[judged]) if judged.sum() > 1 else None


def _rated_systems(data: EvalSet) -> np.ndarray:
    return ~np.isnan(data.human["system"]) if "system" in data.human else np.zeros(len(data.systems), dtype=bool)


def _da_systems(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray, ...]]:
    rated = _rated_systems(data)
    return (data.human["system"][rated], system[rated]) if rated.sum() > 2 else None


def _hybrid_rows(data: EvalSet) -> np.ndarray:
    """The systems hybrids are made of: those with DA segment scores (and a system score, if any)."""
    judged = (~np.isnan(data.human["segment"])).any(axis=1)
    return judged & _rated_systems(data) if "system" in data.human else judged


def _hybrid_inputs(
    data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    if seg is None or "segment" not in data.human:
        return None
    rows = _hybrid_rows(data)
    return (data.human["segment"][rows], seg[rows]) if rows.sum() >= 2 else None


def hybrid_pearson(human: np.ndarray, metric: np.ndarray, hybrids: int = HYBRIDS) -> float:
    """Pearson over ``hybrids`` hybrid systems of the ``(systems, segments)`` scores (seed ``HYBRID_SEED``).

    Args:
        human: DA segment scores, NaN where not judged.
        metric: the metric's segment scores.
        hybrids: how many hybrid systems (WMT18: 10,000).

    Returns:
        Pearson's r between the hybrids' human and metric scores.

    Example:
        >>> human = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, np.nan], [2.0, 2.0, 2.0]])
        >>> round(hybrid_pearson(human, np.nan_to_num(human) * 2, 50), 3) > 0.5
        True
    """
    return pearson(*hybrid_systems(human, metric, hybrids, seed=HYBRID_SEED))


WMT_PACKAGE_MEASURES: Tuple[Measure, ...] = (
    Measure(
        "segment",
        "tau",
        _darr,
        lambda outcomes, ties: tau_from_outcomes(outcomes, ties),
        "bootstrap",
        ("ties",),
        top_k=True,
    ),
    Measure(
        "segment",
        "metric-ties",
        _darr,
        lambda outcomes, ties: float(np.mean(outcomes == 0)),
        uses=("ties",),
        top_k=True,
    ),
    Measure("segment", "pearson", _da_segments, pearson, "bootstrap"),
    Measure("system", "pearson", _da_systems, pearson),
    Measure("hybrid", "pearson", _hybrid_inputs, hybrid_pearson, uses=("hybrids",)),
)


def read_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """A metric's scores in WMT's ``final-metric-scores`` format: a ``.seg.score`` file
    (``METRIC LP DATA SYSTEM SID SCORE``, every segment of every system of the pair), optionally
    with its ``.sys.score`` (``SEG,SYS``; else the system score is the mean of the segments). The
    rows of metric ``name`` are read (a file of one metric: its rows, whatever it calls it)."""
    seg_path, sys_path = segment_and_system(name, path)
    lines = data.lines or data.items
    seg = np.full((len(data.systems), lines), np.nan)
    scores = _metric_rows(read_metric_scores(seg_path, "segment"), name, data, seg_path)
    row = {s: i for i, s in enumerate(data.systems)}
    for (system, sid), value in scores.items():
        if system in row and sid <= lines:
            seg[row[system], sid - 1] = value
    missing = np.argwhere(np.isnan(seg))
    if missing.size:
        system, line = missing[0]
        raise DataError(f"{seg_path}: no score of {data.systems[system]} segment {line + 1} ({len(missing)} missing)")
    seg = seg[:, : data.items]
    signature = f"scores:{Path(seg_path).name}"
    if sys_path is None:
        return seg, seg.mean(axis=1), f"{signature}|system:mean-of-segments"
    by_system = _metric_rows(read_metric_scores(sys_path, "system"), name, data, sys_path)
    absent = [s for s in data.systems if (s, 0) not in by_system]
    if absent:
        raise DataError(f"{sys_path}: no system score of {', '.join(absent)}")
    return seg, np.array([by_system[s, 0] for s in data.systems]), f"{signature}|system:{Path(sys_path).name}"


def _metric_rows(
    table: Dict[Tuple[str, str], Any], name: str, data: EvalSet, path: Any
) -> Dict[Tuple[str, int], float]:
    _, lp = data.derived("package", lambda: (None, ""))
    metrics = sorted({metric for metric, _ in table})
    metric = name if name in metrics else (metrics[0] if len(metrics) == 1 else None)
    if metric is None:
        raise DataError(f"{path}: scores of {metrics}, none called {name!r} (--scores NAME=FILE names it)")
    if (metric, lp) not in table:
        raise DataError(f"{path}: no {metric} scores of {lp}")
    return table[metric, lp]


def official_scores(package: Package, names: Sequence[str]) -> Dict[str, str]:
    """``{name: "SEG,SYS"}`` (or ``SEG`` alone) of metrics in the package's ``final-metric-scores``.

    Args:
        package: the package.
        names: metric names as the score files' first column spells them.

    Returns:
        The ``scores`` entries of those metrics.

    Raises:
        ArgumentError: a name no segment-level file of the package holds (the names it holds listed).
    """
    found: Dict[str, Dict[str, str]] = {}
    for path, level in metric_files(package):
        for metric, _ in read_metric_scores(path, level):
            found.setdefault(metric, {}).setdefault(level, str(path))
    out = {}
    for name in names:
        if "segment" not in found.get(name, {}):
            known = sorted(m for m, files in found.items() if "segment" in files)
            raise ArgumentError(f"--official {name}: no final-metric-scores .seg.score file holds it; it holds {known}")
        files = found[name]
        out[name] = files["segment"] + (f",{files['system']}" if "system" in files else "")
    return out


def significance(
    data: EvalSet,
    kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]],
    table: MetaTable,
    task: Run,
    permutations: int,
    hybrids: int = HYBRIDS,
) -> List[str]:
    """Paired bootstrap between metrics' tau; Williams tests between their system and hybrid correlations."""
    outcomes = {n: o[0] for n, (seg, sys) in kept.items() if (o := _darr(data, seg, sys)) is not None}
    lines = task.beaten(outcomes, task.tau, f"{data.name} segment tau") if outcomes else []
    levels: Dict[str, Dict[str, Any]] = {"system": {n: _da_systems(data, seg, sys) for n, (seg, sys) in kept.items()}}
    if "segment" in data.human:
        levels["hybrid"] = {}
        for n, (seg, sys) in kept.items():
            inputs = _hybrid_inputs(data, seg, sys)
            levels["hybrid"][n] = (
                None if inputs is None else hybrid_systems(inputs[0], inputs[1], hybrids, seed=HYBRID_SEED)
            )
    for level, per_metric in levels.items():
        for a, b in itertools.permutations([n for n, v in per_metric.items() if v is not None], 2):
            human, first = per_metric[a]
            try:
                t, p = williams_test_scores(human, first, per_metric[b][1])
            except ValueError:  # identical or constant scores: nothing to test
                continue
            if p < SIGNIFICANCE_LEVEL:
                lines.append(
                    f"  {a} significantly beats {b} on {data.name} {level} level (Williams t={t:.3f}, p={p:.3f})"
                )
    return lines


# the run settings wmt16-18 read (``RunOptions`` fields): every task's and these
WMT_PACKAGE_READS = EVERY_TASK + ("bootstrap", "export_scores", "top_k", "select_model")


def wmt_package(
    year: str,
    data: Optional[PathLike],
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, Any]] = None,
    *,
    pairs: Optional[Sequence[str]] = None,
    baselines: bool = False,
    official: Optional[Sequence[str]] = None,
    ties: str = "discordant",
    hybrids: int = HYBRIDS,
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """WMT16-18 on WMT's metrics-task package at ``data`` (``year``: ``"wmt16"``, ``"wmt17"``, ``"wmt18"``).

    Args:
        year: which test set the package holds (newstest2016 ... newstest2018).
        data: the package folder (``manual-evaluation/``, ``txt/`` or the folder nesting it).
        metrics: registry specs to score.
        scores: metric name -> a ``final-metric-scores`` ``.seg.score`` file, or ``"SEG,SYS"``.
        pairs: language pairs (default: every pair with system outputs).
        baselines: also score ``WMT18_BASELINES`` (BLEU with ``bleu:zh`` for a Chinese target).
        official: metrics of the package's ``final-metric-scores/`` to evaluate by their name there
            (``--official NAME``): their ``.seg.score`` file, with the ``.sys.score`` that has them.
        ties: how a metric tie on a daRR pair counts (``"discordant"``, WMT17-18; ``"exclude"``).
        hybrids: hybrid systems of the ``hybrid pearson`` row (10,000 as WMT18).
        options: the run settings (``bootstrap``, resamples of the bootstrap intervals, 0: none;
            ``seed``; ``limit``, the first ``limit`` segments of each pair only; ``progress``;
            ``load_options`` and ``scorers``; ``export_scores``, a folder the scored metrics'
            scores are written to, one subfolder per pair; ``top_k``, the system-level rows again
            over the ``top_k`` best systems by DA; ``lower_is_better``; ``select_model``, Hits@1,
            MRR and Diff over hybrids instead of the measures).
        **settings: those settings as keywords instead (``bootstrap`` 1000 by default then).

    Returns:
        The rows of every pair.

    Raises:
        ArgumentError: an unknown ``year``, no metric, or a setting out of range.
        DataError: a malformed package file (named with its line).

    Example:
        >>> wmt_package("wmt15", "x", ["chrf"])
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: year must be one of ['wmt16', 'wmt17', 'wmt18'], got 'wmt15'
    """
    if year not in TEST_SETS:
        raise ArgumentError(f"year must be one of {sorted(TEST_SETS)}, got {year!r}")
    if data is None:
        raise ArgumentError(f"data is required: the {year} metrics-task package folder (--data)")
    if isinstance(hybrids, bool) or not isinstance(hybrids, int) or hybrids < 2:
        raise ArgumentError(f"hybrids must be an integer >= 2 (--hybrids), got {hybrids!r}")
    opts = RunOptions.given(options, settings, year, WMT_PACKAGE_READS, bootstrap=1000).with_scorers()
    task = opts.run(ties)
    test_set = TEST_SETS[year]
    lps = language_pairs(data, test_set, pairs)
    if official:
        scores = {**(scores or {}), **official_scores(find_package(data, test_set), official)}
    specs = list(metrics)
    table = MetaTable(year)
    descriptor = TaskDescriptor(
        year,
        load_package_set,
        WMT_PACKAGE_MEASURES,
        read_scores,
        BARTSCORE_SEGMENT,
        significance=functools.partial(significance, hybrids=hybrids),
        settings=("ties", "hybrids"),
        bootstrap_items="",
        progress=year + " {data}: {metric} ({systems} systems x {items} segments)",
        hybrid_level="segment",
    )
    with keep_finished(table, task, sources_of(specs + (list(WMT18_BASELINES.values()) if baselines else []), scores)):
        for lp in lps:
            extra = []
            if baselines:
                bleu = "bleu:zh" if lp.endswith("-zh") else WMT18_BASELINES["BLEU"]
                extra = [bleu if name == "BLEU" else spec for name, spec in WMT18_BASELINES.items()]
            run(
                descriptor,
                specs + [s for s in extra if s not in specs],
                scores,
                data=data,
                options=dataclasses.replace(
                    opts, export_scores=None if opts.export_scores is None else Path(opts.export_scores) / lp
                ),
                into=table,
                task=task,
                lp=lp,
                test_set=test_set,
                ties=ties,
                hybrids=hybrids,
            )
    return table


def wmt16(
    data: Optional[PathLike], metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, **options: Any
) -> MetaTable:
    """WMT16 on its metrics-task package; options as :func:`wmt_package`."""
    return wmt_package("wmt16", data, metrics, scores, **options)


def wmt17(
    data: Optional[PathLike], metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, **options: Any
) -> MetaTable:
    """WMT17 on its metrics-task package; options as :func:`wmt_package`."""
    return wmt_package("wmt17", data, metrics, scores, **options)


def wmt18(
    data: Optional[PathLike], metrics: Sequence[str] = (), scores: Optional[Mapping[str, Any]] = None, **options: Any
) -> MetaTable:
    """WMT18 on its metrics-task package; options as :func:`wmt_package`."""
    return wmt_package("wmt18", data, metrics, scores, **options)
