"""WMT21 DA (any to-English pair) on the generic runner: daRR tau from DA, segment and system Pearson.

``WMT21_TASK`` loads a WMT21 DA folder into an ``EvalSet`` (human levels ``raw`` and ``z``:
``(systems, segments)`` DA, NaN where unjudged; ``system``: the official system z), derives the
daRR pairs from the raw DA (WMT18's rule: more than 25 points apart) and lists its measure rows:
segment ``tau`` and ``metric-ties`` over the daRR pairs (the ``ties`` rule a setting), segment
``pearson-raw`` / ``pearson-z`` over judged segments (bootstrap intervals) and system
``pearson-z``. Notes: paired bootstrap between metrics' tau, Williams tests at system level.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import DataError
from nlgscore.meta.data import loaders, precomputed
from nlgscore.meta.data.alignment import check_alignment
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.mtme import is_mtme_file, read_mtme
from nlgscore.meta.data.wmt21 import load_wmt21, wmt21_judgments
from nlgscore.meta.stats import pearson
from nlgscore.meta.stats.wmt import (
    williams_test_scores,
)
from nlgscore.meta.tasks.generic import BARTSCORE_SEGMENT, Scores, TaskDescriptor, run
from nlgscore.meta.tasks.measures import DARR_MEASURES, Measure, darr_outcome_inputs
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import SIGNIFICANCE_LEVEL, MetaTable, Run

PathLike = Union[str, "os.PathLike[str]"]


def _folder(data_dir: Optional[PathLike], folder: Optional[PathLike], lp: Optional[str]) -> Path:
    if folder is not None:
        return loaders.data_file(Path(folder).name, Path(folder).parent)
    if data_dir is not None and (Path(data_dir) / "da-seg-scores.csv").is_file():
        return Path(data_dir)
    return loaders.data_file(f"wmt21-{lp or 'de-en'}", data_dir)


def load_wmt21_set(
    data: Optional[PathLike] = None,
    limit: Optional[int] = None,
    lp: Optional[str] = None,
    folder: Optional[PathLike] = None,
    reference: str = "A",
    include_human: bool = False,
    repeats: str = "error",
) -> EvalSet:
    """The WMT21 DA folder (``folder``, else ``data`` itself when it holds ``da-seg-scores.csv``,
    else ``<data>/wmt21-<lp>``) as an ``EvalSet`` of its systems (HUMAN only with ``include_human``)."""
    path = _folder(data, folder, lp)
    da = load_wmt21(path, lp=lp, reference=reference, repeats=repeats)
    judgments = wmt21_judgments(da, include_human=include_human, limit=limit)  # systems, DA, daRR pairs
    systems, n = judgments.systems, judgments.raw.shape[1]
    evalset = EvalSet(
        f"wmt21-{da.lp}",
        systems,
        [da.hyps[s][:n] for s in systems],
        [da.ref[:n]],
        da.src[:n],
        {"raw": judgments.raw, "z": judgments.z, "system": judgments.sys_z},
        reference,
        lines=len(da.ref),
    )
    row = {s: i for i, s in enumerate(systems)}
    evalset.derived(
        "darr",
        lambda: tuple(
            np.array(column, dtype=np.int64)
            for column in (
                [p.segment for p in judgments.pairs],
                [row[p.better] for p in judgments.pairs],
                [row[p.worse] for p in judgments.pairs],
            )
        ),
    )
    evalset.derived("every system", lambda: sorted(da.hyps))
    pairs = darr_pairs(evalset)
    if not pairs[0].size:
        raise DataError(f"{path}: no daRR pairs in the first {n} segments")
    human = " incl. HUMAN (ref.B)" if include_human else ""
    evalset.notes.append(
        f"{evalset.name}: {n} segments, {len(systems)} systems{human}, reference {reference}, "
        f"{pairs[0].size} daRR pairs (raw DA more than 25 apart)"
    )
    evalset.notes.append("  " + check_alignment(evalset.hyps, judgments.z).describe())
    return evalset


def darr_pairs(data: EvalSet) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(segment, better row, worse row)`` of the daRR pairs the loader derived from raw DA (WMT18)."""
    return data.derived("darr", lambda: data.darr_pairs("raw", margin=25.0))


def _judged(level: str):
    def inputs(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        if seg is None:  # a score file of system scores: no segment rows
            return None
        judged = ~np.isnan(data.human["raw"])
        return data.human[level][judged], seg[judged]

    return inputs


def _system(data: EvalSet, seg: Optional[np.ndarray], system: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    return data.human["system"], system


WMT21_MEASURES = (
    *DARR_MEASURES,
    Measure("segment", "pearson-raw", _judged("raw"), pearson, "bootstrap"),
    Measure("segment", "pearson-z", _judged("z"), pearson, "bootstrap"),
    Measure("system", "pearson-z", _system, pearson),  # 19 systems: no interval
)


def read_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """A ``system<TAB>line<TAB>score`` TSV or an mt-metrics-eval segment file, with an optional system file."""
    seg_path, sys_path = precomputed.segment_and_system(name, path)
    n, lines, signature = data.items, data.lines or data.items, f"scores:{Path(seg_path).name}"
    every = data.derived("every system", lambda: data.systems)  # rows of these systems are not errors
    if is_mtme_file(seg_path):  # mt-metrics-eval's <system><TAB><score> files
        seg, system = read_mtme(seg_path, data.systems, lines, first=n)
        if sys_path is not None:
            system = read_mtme(sys_path, data.systems, 0)[1]
        if seg is None:
            raise DataError(f"{seg_path}: a system-level file; WMT21 needs segment scores")
        how = "mean-of-segments" if system is None else Path(sys_path or seg_path).name
        seg = seg[:, :n]
        return seg, seg.mean(axis=1) if system is None else np.asarray(system, dtype=float), f"{signature}|system:{how}"
    seg = precomputed.read_wmt21_scores(seg_path, data.systems, lines, ignored=every)[:, :n]
    if sys_path is None:
        return seg, seg.mean(axis=1), f"{signature}|system:mean-of-segments"
    system = precomputed.read_system_scores(sys_path, data.systems, ignored=every)
    return seg, np.asarray(system, dtype=float), f"{signature}|system:{Path(sys_path).name}"


def significance(
    data: EvalSet,
    kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]],
    table: MetaTable,
    task: Run,
    permutations: int,
) -> List[str]:
    """Paired bootstrap between metrics' tau, and the Williams test between their system correlations."""
    outcomes = {
        name: found[0] for name, (seg, system) in kept.items() if (found := darr_outcome_inputs(data, seg, system))
    }
    lines = task.beaten(outcomes, task.tau, "segment tau")
    for a, b in itertools.permutations(kept, 2):
        try:
            t, p = williams_test_scores(data.human["system"], kept[a][1], kept[b][1])
        except ValueError:  # identical or constant system scores: nothing to test
            continue
        if p < SIGNIFICANCE_LEVEL:
            lines.append(f"  {a} significantly beats {b} at system level (Williams t={t:.3f}, p={p:.3f})")
    return lines


WMT21_TASK = TaskDescriptor(
    "wmt21",
    load_wmt21_set,
    WMT21_MEASURES,
    read_scores,
    BARTSCORE_SEGMENT,
    significance=significance,
    settings=("ties",),
    progress="{data}: {metric} ({systems} systems x {items} segments)",
    hybrid_level="z",
)


# the run settings wmt21 reads (``RunOptions`` fields): every task's and these
WMT21_READS = EVERY_TASK + ("bootstrap", "export_scores", "top_k", "select_model")


def wmt21(
    data_dir: Optional[PathLike] = None,
    lp: Optional[str] = None,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, Any]] = None,
    *,
    folder: Optional[PathLike] = None,
    reference: str = "A",
    include_human: bool = False,
    ties: str = "discordant",
    repeats: str = "error",
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """WMT21 DA (any to-English pair): daRR tau from DA, segment Pearson (raw, z), system Pearson.

    The folder is ``folder``, else ``data_dir`` itself when it holds ``da-seg-scores.csv``, else
    ``<data_dir>/wmt21-<lp>``. ``scores`` maps a name to a ``system<TAB>line<TAB>score`` TSV or an
    mt-metrics-eval ``<system><TAB><score>`` segment file, or to ``(segment file, system file)`` /
    ``"SEG,SYS"`` to give system scores too.
    chrF and BLEU system scores are sacreBLEU corpus scores; other metrics use segment means.
    ``options`` (or its fields as keywords, ``settings``; ``bootstrap`` 1000 by default then):
    ``top_k``, ``lower_is_better``, ``select_model`` as :func:`nlgscore.meta.tasks.generic.run`
    (hybrid systems average the segments' z scores). The generic runner over ``WMT21_TASK``.
    """
    return run(
        WMT21_TASK,
        metrics,
        scores,
        data=data_dir,
        options=RunOptions.given(options, settings, "wmt21", WMT21_READS, bootstrap=1000),
        lp=lp,
        folder=folder,
        reference=reference,
        include_human=include_human,
        repeats=repeats,
        ties=ties,
    )
