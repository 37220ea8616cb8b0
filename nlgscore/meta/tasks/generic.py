"""One runner for every systems x items data set: ``run(descriptor, metrics, scores) -> MetaTable``.

A ``TaskDescriptor`` says how to load the data (a function returning an ``EvalSet``), which
measures to compute (``Measure`` rows: level, statistic, resampling), how to read a score file,
which segment-level definition a baseline takes in this protocol, and what significance notes to
add. Adding a data set is one descriptor: its loader and its rows (CONTRIBUTING, and
``tests/meta/test_meta_generic.py`` adds one for a toy data set made in the test).

>>> import numpy as np
>>> from nlgscore.meta.data.model import EvalSet
>>> from nlgscore.meta.stats import CORRELATIONS
>>> from nlgscore.meta.tasks.measures import Measure, system_scores
>>> toy = EvalSet("toy", ["A", "B", "C"], [["the cat sat"], ["a cat sat"], ["dogs"]], [["the cat sat"]],
...               human={"system": np.array([2.0, 3.0, 1.0])})
>>> descriptor = TaskDescriptor("toy", lambda data, limit=None: toy,
...                             (Measure("system", "pearson", system_scores, CORRELATIONS["pearson"]),))
>>> [(r.dataset, r.metric, r.measure, round(r.value, 3)) for r in run(descriptor, ["chrf"]).rows]
[('toy', 'chrf', 'pearson', 0.521)]
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.data.mtme import read_mtme, write_mtme
from nlgscore.meta.data.precomputed import segment_and_system
from nlgscore.meta.engine import Scorers, short_name
from nlgscore.meta.report import Row
from nlgscore.meta.stats.top_k import top_systems
from nlgscore.meta.tasks.measures import Measure
from nlgscore.meta.tasks.options import RUN_OPTIONS, RunOptions, check_context_value
from nlgscore.meta.tasks.runner import MetaTable, Run, keep_finished, sources_of
from nlgscore.meta.tasks.select_model import selection_rows

Scores = Tuple[Optional[np.ndarray], np.ndarray, str]  # (segment matrix or None, system scores, signature)
# The BARTScore paper's segment BLEU (its Moses-tokenised sentBLEU), which the WMT19, WMT21 and
# SummEval tasks keep for ``bleu``; the WMT22+ tasks use the registry's ``bleu`` (sentence_bleu).
BARTSCORE_SEGMENT = {"bleu": "sentbleu"}


def read_mtme_scores(data: EvalSet, name: str, path: Any) -> Scores:
    """A metric's scores from mt-metrics-eval files (``<system><TAB><score>``): a ``.seg.score``
    file, its ``.sys.score`` sibling when present, or ``SEG,SYS``; system = mean of segments without one."""
    seg_path, sys_path = segment_and_system(name, path)
    seg, system = read_mtme(seg_path, data.systems, data.lines or data.items, first=data.items)
    if sys_path is not None:
        _, system = read_mtme(sys_path, data.systems, 0)
    signature = f"scores:{Path(seg_path).name}"
    if seg is not None:
        seg = seg[:, : data.items]
    if system is None:
        if seg is None:
            raise DataError(f"{seg_path}: neither segment nor system scores")
        return seg, seg.mean(axis=1), f"{signature}|system:mean-of-segments"
    return seg, system, f"{signature}|system:{Path(sys_path or seg_path).name}"


@dataclass(frozen=True)
class TaskDescriptor:
    """How one data set is meta-evaluated: the runner's side of a ``nlgscore meta`` subcommand.

    Adding a data set is one descriptor: its loader and its measure rows; `run` does the rest.

    Attributes:
        name: the task's name (``wmt19``, ``summeval``), as the table and refusals name it.
        load: ``load(data, limit=..., **options)`` reads the data set into an `EvalSet` (``data``:
            its folder, or None for the default place; ``limit``: the first items only).
        measures: the rows computed for each metric.
        read_scores: ``read_scores(data, name, path)`` reads a metric's precomputed scores as
            ``(segment matrix or None, system scores, signature)``; mt-metrics-eval's files by default.
        segment_specs: the spec scored for a metric name at the segment level (the BARTScore
            paper's ``bleu`` is ``sentbleu``).
        significance: ``significance(data, kept, table, run, permutations)`` gives the notes of the
            significance tests between the metrics, run after every metric is scored.
        settings: the run options the measures take (``"ties"``), not given to the loader.
        bootstrap_items: what the bootstrap resamples when it is the items (named in the refusal
            of fewer than 2 of them); empty when it resamples something else.
        system_level: False: no system scores are scored (the measures read segments only, and the
            system score is the mean of the segments).
        combine: reduces a metric's ``(systems, items, refs)`` scores to ``(systems, items)`` when a
            data set has several references (None: the first reference's).
        scored: appended to a scored metric's signature (``"|refs:max"``).
        progress: the progress bar's description, formatted with ``data``, ``metric``, ``systems``
            and ``items``.
        documents: the loader gives document ids (``EvalSet.docs``) and takes ``context``, so
            ``--context`` works.
        hybrid_level: the human level hybrid systems average (``select_model``): ``"segment"``, or
            WMT21 DA's ``"z"``.
        hybrid_level: the human level hybrid systems average (``select_model``; WMT21 DA's ``"z"``).

    Example:
        >>> import numpy as np
        >>> from nlgscore.meta import EvalSet, Measure, pearson
        >>> def load(data, limit=None):
        ...     outputs = [["the cat sat on the mat"], ["a cat sat"], ["dogs"]]
        ...     return EvalSet("toy", ["good", "mid", "bad"], outputs, [["the cat sat on the mat"]],
        ...                    human={"system": np.array([3.0, 2.0, 1.0])})
        >>> by_system = Measure("system", "pearson", lambda data, seg, system: (data.human["system"], system), pearson)
        >>> toy = TaskDescriptor("toy", load, (by_system,))
        >>> [(row.metric, row.level, row.measure, round(row.value, 4)) for row in run(toy, ["chrf"]).rows]
        [('chrf', 'system', 'pearson', 0.9615)]
    """

    name: str
    load: Callable[..., EvalSet]  # load(data, limit=..., **options) -> EvalSet
    measures: Tuple[Measure, ...]
    read_scores: Callable[[EvalSet, str, Any], Scores] = read_mtme_scores
    segment_specs: Mapping[str, str] = field(default_factory=dict)  # e.g. BARTSCORE_SEGMENT
    significance: Optional[Callable[..., List[str]]] = None  # (data, kept, table, run, permutations) -> notes
    settings: Tuple[str, ...] = ()  # run options the measures use (not the loader's), e.g. "ties"
    bootstrap_items: str = ""  # what the bootstrap resamples, when it is the items (checked: at least 2)
    system_level: bool = True  # False: no system scores are computed (the measures use segments only)
    combine: Optional[Callable[[np.ndarray], np.ndarray]] = None  # (systems, items, refs) -> (systems, items)
    scored: str = ""  # appended to a scored metric's signature (e.g. "|refs:max")
    progress: str = "{data}: {metric} ({systems} systems x {items} items)"  # the progress bar's description
    documents: bool = False  # the loader gives document ids (EvalSet.docs) and takes ``context``: --context works
    hybrid_level: str = "segment"  # the human level hybrid systems average (``select_model``; WMT21 DA: "z")


def check_context(context: Any, name: str, documents: bool) -> int:
    """``context`` (``--context k``) as an int >= 0; above 0 only for a data set with ``documents``.

    >>> check_context(2, "wmt24", True), check_context(0, "mqm", False)
    (2, 0)
    >>> check_context(2, "mqm", False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: --context 2: the mqm data set has no documents to read the previous segments of ...
    """
    context = check_context_value(context)
    if context > 0 and not documents:
        raise ArgumentError(
            f"--context {context}: the {name} data set has no documents to read the previous segments "
            "of (document context works with wmt24 and wmt25); leave --context out"
        )
    return int(context)


def _flat_scores(
    descriptor: TaskDescriptor, data: EvalSet, spec: str, name: str, scorers: Scorers, context: int
) -> Tuple[List[float], str]:
    """Every output against each reference set, systems in order; with ``context``, one call per
    (reference set, system), so each system's segments read the previous ones of their document."""
    copies = len(data.systems) * len(data.refs)
    if context == 0:
        srcs = None if data.srcs is None else data.srcs * copies
        hyps = [h for row in data.hyps for h in row] * len(data.refs)
        return scorers.score(spec, hyps, [r for ref in data.refs for r in ref * len(data.systems)], srcs, name=name)
    if data.docs is None:
        raise ArgumentError(f"--context {context}: {data.name} has no document ids; leave --context out")
    flat: List[float] = []
    signature = ""
    for ref in data.refs:
        for row in data.hyps:
            scores, signature = scorers.score_in_context(spec, row, ref, data.srcs, data.docs, context, name=name)
            flat += scores
    return flat, signature


def _scored(descriptor: TaskDescriptor, data: EvalSet, name: str, scorers: Scorers, context: int = 0) -> Scores:
    spec = descriptor.segment_specs.get(name.lower(), name)
    n, refs = data.items, data.refs[0]
    flat, signature = _flat_scores(descriptor, data, spec, name, scorers, context)
    signature += descriptor.scored
    seg = np.array(flat, dtype=float).reshape(len(data.refs), len(data.systems), n)
    if descriptor.combine is not None:  # (systems, items, refs), contiguous: the reduction's summation order
        seg = descriptor.combine(np.ascontiguousarray(np.moveaxis(seg, 0, -1)))
    else:
        seg = seg[0]
    if not descriptor.system_level:  # the mean over items, summed item by item as an (items, systems) array is
        return seg, np.ascontiguousarray(seg.T).mean(axis=0), signature
    system, how = scorers.system_scores(name, data.hyps, refs, seg)
    return seg, np.array(system, dtype=float), f"{signature}|{how}"


def _row(
    run: Run,
    measure: Measure,
    data: EvalSet,
    seg: Optional[np.ndarray],
    system: np.ndarray,
    settings: Dict[str, Any],
    signature: str,
    **common: Any,
) -> Optional[Row]:
    inputs = measure.inputs(data, seg, system)
    if inputs is None:
        return None
    used = {name: settings[name] for name in measure.uses}
    statistic = functools.partial(measure.statistic, **used) if used else measure.statistic
    signature += "".join(f"|{name}:{value}" for name, value in used.items()) + measure.signature
    if measure.resampling == "bootstrap":
        return run.row(statistic, inputs, level=measure.level, measure=measure.name, signature=signature, **common)
    return Row(
        level=measure.level, measure=measure.name, value=float(statistic(*inputs)), signature=signature, **common
    )


def run(
    descriptor: TaskDescriptor,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, Any]] = None,
    *,
    data: Any = None,
    options: Optional[RunOptions] = None,
    into: Optional[MetaTable] = None,
    task: Optional[Run] = None,
    **keywords: Any,
) -> MetaTable:
    """Every measure of ``descriptor`` for each metric: specs scored here, ``scores`` read from files.

    `TaskDescriptor`'s example runs it on a data set built in memory.

    Args:
        descriptor: the task: its loader, measures and settings.
        metrics: the specs scored (``"chrf"``, ``"bertscore:minilm"``).
        scores: precomputed scores by metric name: a score file, ``"SEG,SYS"``, or a ``(segment
            file, system file)`` pair, as ``descriptor.read_scores`` reads them.
        data: the data set's location, given to the loader (None: its default place).
        options: the run settings (``RunOptions``: resamples, seed, ``limit``, scorers, export
            folders, ``context``, ``top_k``, ``lower_is_better``, ``select_model``); ``export_mtme``
            writes the scored metrics' scores as mt-metrics-eval files (``<metric>-ref<X>.seg.score``
            and ``.sys.score``), as does ``export_scores`` (where the command line also writes JSONL).
            A ``context`` above 0 needs a data set with documents and metrics that read context.
        into: the table to add the rows to (a task over several data sets, WMT19's language pairs).
        task: the run shared across those data sets (its options and the metrics that finished),
            so an interruption keeps the metrics that finished every one.
        **keywords: the run settings as keywords instead of ``options`` (``bootstrap=0``: the
            fields of ``RunOptions``), the loader's options, and the run settings the measures use
            (``descriptor.settings``, e.g. ``ties``).

    Returns:
        The table: a row per data set, metric, level and measure, with the data set's notes.

    Raises:
        ArgumentError: no metric, a resample count, seed or ``limit`` out of range, ``context``
            for a data set without documents or a metric that cannot read it, or a
            ``lower_is_better`` name the run does not evaluate.
        ArgumentTypeError: ``scores`` is not a mapping of score files, or ``select_model`` not a
            ``SelectModel``.
        DataError: a data or score file is malformed (the message names it).
    """
    given = {name: keywords.pop(name) for name in RUN_OPTIONS if name in keywords}
    opts = RunOptions.given(options, given, "run", RUN_OPTIONS)
    settings = {name: keywords.pop(name) for name in descriptor.settings if name in keywords}
    task = task or opts.run(**({"ties": settings["ties"]} if "ties" in settings else {}))
    sources, limit = sources_of(metrics, scores, system_files=True), opts.limit
    permutations, select_model, top_k = opts.permutations, opts.select_model, opts.top_k
    scorers = opts.scorers_in_use()
    context = check_context(opts.context, descriptor.name, descriptor.documents)
    turned = _lower_is_better(opts.lower_is_better, sources)
    if context > 0:  # refused before the data are read and anything is scored
        for spec, file in sources:
            if file is None:
                scorers.check_context(descriptor.segment_specs.get(spec.lower(), spec), context)
        keywords["context"] = context
    evalset = descriptor.load(data, limit=limit, **keywords)  # the rest: the loader's
    if descriptor.bootstrap_items and task.bootstrap > 0:
        task.check_items(evalset.items, f"{descriptor.bootstrap_items} of {evalset.name}", limit)
    top = None if top_k is None or select_model is not None else _top(evalset, top_k)
    table = into if into is not None else MetaTable(descriptor.name)
    kept: Dict[str, Tuple[Optional[np.ndarray], np.ndarray]] = {}
    counts = dict(data=evalset.name, systems=len(evalset.systems), items=evalset.items, refs=len(evalset.refs))
    with keep_finished(table, task, sources) if into is None else contextlib.nullcontext():  # else the caller's
        for name, file in task.each(sources, lambda name: descriptor.progress.format(metric=name, **counts)):
            if file is None:
                seg, system, signature = _scored(descriptor, evalset, name, scorers, context)
                for folder in (opts.export_mtme, opts.export_scores):
                    if folder is not None and seg is not None:  # a scored metric has its segment scores
                        write_mtme(
                            folder,
                            name,
                            evalset.reference,
                            dict(zip(evalset.systems, seg.tolist())),
                            dict(zip(evalset.systems, system.tolist())),
                        )
            else:
                seg, system, signature = descriptor.read_scores(evalset, name, file)
            spec = descriptor.segment_specs.get(name.lower(), name)
            if name in turned or (file is None and scorers.lower_is_better(spec)):
                # an error rate: negated, so that every measure reads higher as better
                seg, system = None if seg is None else -seg, -system
                signature += "|lower-is-better:negated"
            metric = short_name(name)
            kept[metric] = (seg, system)
            if select_model is not None:
                dataset = evalset.name
                table.rows += selection_rows(
                    select_model, evalset, descriptor.hybrid_level, seg, metric, signature, dataset
                )
                continue
            for measure in descriptor.measures:
                row = _row(
                    task,
                    measure,
                    evalset,
                    seg,
                    system,
                    settings,
                    signature,
                    dataset=measure.dataset or evalset.name,
                    metric=metric,
                )
                if row is not None:
                    table.rows.append(row)
            if top is not None:
                table.rows += _top_rows(task, descriptor, top, seg, system, settings, signature, metric)
    table.notes += evalset.notes
    note = (
        f"document context: each scored segment read after the previous {context} segments of its document "
        f"(the data set's document ids; the scored metrics' signatures hold ctx:{context})"
    )
    if context > 0 and note not in table.notes:
        table.notes.append(note)
    if descriptor.significance is not None and select_model is None:
        table.notes += descriptor.significance(evalset, kept, table, task, permutations)
    return table


def _lower_is_better(names: Any, sources: Sequence[Tuple[str, Any]]) -> frozenset:
    """``lower_is_better`` as a set of the run's metric names; a name the run does not have is refused."""
    if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in names):
        raise ArgumentTypeError(f"lower_is_better must be a list of metric names, got {names!r}")
    known = [name for name, _ in sources]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ArgumentError(
            f"lower_is_better (--lower-is-better) names {unknown}, which the run does not evaluate "
            f"(its metrics: {known}); give the NAME of --scores NAME=FILE or the --metric spec"
        )
    return frozenset(names)


def _top(data: EvalSet, k: int) -> Tuple[int, np.ndarray, EvalSet]:
    """``(k, rows of the k best systems by human system score, the data set of those systems)``."""
    if "system" not in data.human:
        raise ArgumentError(f"top_k={k} (--top-k): {data.name} has no system-level human scores to rank systems by")
    best = top_systems(data.human["system"], k)
    rows = np.sort(best)  # the data set's order: the measures sum over the systems as on a set of only these
    subset = data.select_systems(rows)
    kept = ", ".join(data.systems[r] for r in best)
    fewer = f" (only {rows.size} systems have a human score)" if rows.size < k else ""
    data.notes.append(f"{data.name}: top-{k} systems by human score{fewer}: {kept}")
    return k, rows, subset


def _top_rows(
    task: Run,
    descriptor: TaskDescriptor,
    top: Tuple[int, np.ndarray, EvalSet],
    seg: Optional[np.ndarray],
    system: np.ndarray,
    settings: Dict[str, Any],
    signature: str,
    metric: str,
) -> List[Row]:
    """Every system-level measure, and those marked ``top_k`` (daRR tau over the pairs of two top-k
    systems), again over the top-k systems only (rows ``<measure>-top<k>``)."""
    k, rows, subset = top
    out = []
    for measure in descriptor.measures:
        if measure.level != "system" and not measure.top_k:
            continue
        row = _row(
            task,
            dataclasses.replace(measure, name=f"{measure.name}-top{k}"),
            subset,
            None if seg is None else seg[rows],
            system[rows],
            settings,
            f"{signature}|top-k:{k}",
            dataset=measure.dataset or subset.name,
            metric=metric,
        )
        if row is not None:
            out.append(row)
    return out
