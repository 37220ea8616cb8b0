"""Meta-evaluation on a human-scores folder (MQM, DA, ...) as the WMT22-25 metrics tasks do it.

``mqm(folder, metrics=["chrf"], scores={"mine": "mine-refA.seg.score"})`` returns a ``MetaTable``:

* system level: ``pearson``, ``accuracy`` (pairwise), ``spa`` (soft pairwise accuracy);
* segment level: ``pearson``, ``kendall`` (no grouping), ``pearson-item``, ``kendall-item``
  (grouped by source segment), ``acc-t`` and ``acc-t-epsilon`` (tie-calibrated acc_eq);
* notes: the data, and significance clusters (ranks) from permutation tests between metrics.

WMT conventions (mt-metrics-eval ``data.py``): a system's human score is the mean over its rated
segments (the folder's ``<kind>-sys-scores.tsv`` when present); its metric score is over the whole
test set (sacreBLEU corpus chrF/BLEU for those two, the mean of segment scores for every other
metric); segment-level ``bleu`` is WMT's baseline since WMT21, sacreBLEU's ``sentence_bleu`` (the
registry's ``bleu``), not the BARTScore paper's Moses-tokenised ``sentbleu``;
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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta import stats
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.ratings import load_ratings
from nlgscore.meta.tasks.generic import TaskDescriptor, run
from nlgscore.meta.tasks.measures import WMT22_MEASURES, segment_matrix, spa_human
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import MetaTable, Run

PathLike = Union[str, "os.PathLike[str]"]
# (level, measure): the order of the table's rows.
MEASURES = tuple((m.level, m.name) for m in WMT22_MEASURES)


def load_mqm(
    folder: PathLike,
    limit: Optional[int] = None,
    reference: Optional[str] = None,
    kind: Optional[str] = None,
    include_human: bool = False,
    repeats: str = "error",
) -> EvalSet:
    """A human-scores folder (``nlgscore.meta.data.ratings``) as an ``EvalSet``: the evaluated systems
    (never the reference in use; human translations only with ``include_human``) x the first
    ``limit`` segments; human system scores from ``<kind>-sys-scores.tsv`` unless a limit cuts the set."""
    if folder is None:
        raise ArgumentError("folder is required: the human-scores folder to evaluate on (--data FOLDER)")
    data = load_ratings(folder, reference, kind, repeats)
    systems = data.systems(include_human)
    if len(systems) < 3:
        raise DataError(f"{data.path}: meta-evaluation needs at least 3 rated systems, got {systems}")
    n = min(len(data.src), limit or len(data.src))
    seg = np.array([data.seg[s][:n] for s in systems])
    rated = ~np.isnan(seg)
    if not rated.any(axis=1).all():
        empty = [s for s, r in zip(systems, rated.any(axis=1)) if not r]
        raise DataError(f"{data.path}: system(s) {empty} have no rated segment in the first {n} lines")
    use_sys_file = limit is None or limit >= len(data.src)
    system = np.array([data.sys[s] if use_sys_file else float(np.nanmean(data.seg[s][:n])) for s in systems])
    evalset = EvalSet(
        f"{data.kind}-{data.lp}",
        systems,
        [data.hyps[s][:n] for s in systems],
        [data.ref[:n]],
        data.src[:n],
        {"segment": seg, "system": system},
        data.reference,
        lines=len(data.src),
    )
    excluded = sorted(set(data.hyps) - set(systems))
    common = int(spa_human(evalset).common.sum())
    evalset.notes.append(
        f"{evalset.name} ({data.path.name}): {n} segments, {int(rated.any(axis=0).sum())} rated, "
        f"{len(systems)} systems; reference {data.reference}; not scored as systems: "
        f"{', '.join(excluded) or 'none'}; SPA on {common} segments rated for every system"
    )
    return evalset


def significance(
    data: EvalSet, kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]], table: MetaTable, run: Run, resamples: int
) -> List[str]:
    """Cluster ranks per measure from pairwise permutation tests (mtme CompareMetrics + AssignRanks);
    none when ``resamples`` is 0."""
    if resamples <= 0:
        return []
    seed = run.seed
    human_seg, human_sys = data.human["segment"], data.human["system"]
    value = {(r.metric, r.level, r.measure): r.value for r in table.rows if r.dataset == data.name}
    rated = ~np.isnan(human_seg)
    every_system = np.ones(len(human_sys), bool)
    tests = {  # measure -> (statistic of one metric's scores, which scores (0 segment, 1 system), the cells resampled)
        ("system", "pearson"): (lambda v: stats.CORRELATIONS["pearson"](human_sys, v), 1, every_system),
        ("system", "accuracy"): (lambda v: stats.pairwise_accuracy(human_sys, v), 1, every_system),
        ("system", "spa"): (spa_human(data).spa, 0, rated),
        ("segment", "pearson"): (lambda m: stats.correlation(human_seg, m), 0, rated),
    }
    calibrated: Dict[str, Tuple[stats.ItemPairs, float]] = {}  # acc-t: each metric's pairs and its epsilon
    lines = []
    for level, measure in (*tests, ("segment", "acc-t")):
        names = [m for m in kept if (m, level, measure) in value and (measure != "acc-t" or kept[m][0] is not None)]
        if len(names) < 2:
            continue
        names.sort(key=lambda m: (-value[m, level, measure], m))
        p = np.zeros((len(names), len(names)))
        for i, j in itertools.combinations(range(len(names)), 2):
            a, b = kept[names[i]], kept[names[j]]
            if measure == "acc-t":  # each metric's pairwise outcomes at its own epsilon (WMT23/24 "pairs" test)
                for name in (names[i], names[j]):
                    if name not in calibrated:
                        pairs = stats.item_pairs(human_seg, segment_matrix(kept[name][0], name))
                        calibrated[name] = (pairs, stats.tie_calibration(pairs)[1])
                (pa, ea), (pb, eb) = calibrated[names[i]], calibrated[names[j]]
                outcome_a, outcome_b = stats.pair_outcomes(pa, ea), stats.pair_outcomes(pb, eb)
                p[i, j] = stats.pairs_permutation_test(outcome_a, outcome_b, pa.weight, resamples, seed)
            else:
                statistic, key, mask = tests[level, measure]
                a_key, b_key = segment_matrix(a[key], names[i]), segment_matrix(b[key], names[j])
                p[i, j] = stats.permutation_test(statistic, a_key, b_key, mask, resamples, seed)
        ranks = stats.cluster_ranks(p)
        lines.append(f"  {level} {measure}: " + ", ".join(f"{n} {r}" for n, r in zip(names, ranks)))
    if lines:
        lines.insert(
            0,
            f"  significance clusters (rank 1 = best; permutation tests, {resamples} resamples, "
            f"seed {seed}, p < {stats.SIG_LEVEL}):",
        )
    return lines


MQM_TASK = TaskDescriptor(
    "mqm",
    load_mqm,
    WMT22_MEASURES,
    significance=significance,
    progress="{data}: {metric} ({systems} systems x {items} segments)",
)


# the run settings mqm reads (``RunOptions`` fields): every task's and these
MQM_READS = EVERY_TASK + ("permutations", "export_mtme", "export_scores", "top_k", "select_model")


def mqm(
    folder: PathLike,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, Any]] = None,
    *,
    reference: Optional[str] = None,
    kind: Optional[str] = None,
    include_human: bool = False,
    repeats: str = "error",
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> MetaTable:
    """Every WMT22-25 measure of each metric on the human-scores ``folder`` (layout: ``nlgscore.meta.data.ratings``).

    ``metrics`` are specs scored here; ``scores`` maps a name to an mt-metrics-eval score file
    (``<system><TAB><score>``: a ``.seg.score`` file, with its ``.sys.score`` sibling when present,
    or ``"SEG,SYS"``). ``options`` (or its fields as keywords, ``settings``): ``permutations``,
    resamples of the significance tests between metrics (0: none; default 1000 as keywords);
    ``export_mtme`` / ``export_scores``, a folder to write the scored metrics' scores to as mtme
    files (the command line's ``--export-scores`` adds nlgscore's JSONL through ``Scorers.export``);
    ``top_k``, ``lower_is_better``, ``select_model``: as the generic runner
    (``nlgscore.meta.tasks.generic.run``), over ``MQM_TASK``.
    """
    if folder is None:
        raise ArgumentError("folder is required: the human-scores folder to evaluate on (--data FOLDER)")
    opts = RunOptions.given(options, settings, "mqm", MQM_READS, permutations=stats.SIG_RESAMPLES)
    return run(
        MQM_TASK,
        metrics,
        scores,
        data=folder,
        options=opts,
        reference=reference,
        kind=kind,
        include_human=include_human,
        repeats=repeats,
    )
