"""The BARTScore benchmark (Yuan et al. 2021) as its authors' analysis code evaluates it.

Sixteen data sets in the authors' layout (``nlgscore.meta.data.bench_records``), each with its
statistic (neulab/BARTScore ``analysis.py``: ``SUMStat``, ``D2TStat``, ``WMTStat``):

* REALSumm, SummEval, Newsroom (NeR18): summary level, per document the Spearman and Kendall
  (tau-b) correlation across the systems, averaged over the documents whose human and metric
  scores are not both non-constant skipped (``evaluate_summary``);
* Rank19: the share of documents whose correct summary the metric scores strictly higher than the
  incorrect one (``get_fact_acc``); QAGS_CNN, QAGS_XSUM: Pearson over the documents
  (``get_fact_pearson``);
* BAGEL, SFHOT, SFRES: Spearman and Kendall over all samples (``evaluate_text``);
* de-en ... zh-en (WMT19 DARR): Kendall's tau-like, a metric tie discordant (``kendall``).

A metric given by its spec is scored against every reference of a record and the scores combined
as the authors did (``--refs``): the mean for the summarisation sets (their ``--multi_ref``), the
maximum for data-to-text. Significance: the authors' test (``nlgscore.meta.stats.subsets``) on the
headline statistic of each column; the text output is the paper's tables (Tables 3-6).

>>> sorted(BENCH_SETS)[:4], len(BENCH_SETS)
(['BAGEL', 'Newsroom', 'QAGS_CNN', 'QAGS_XSUM'], 16)
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from nlgscore.errors import ArgumentError, DataError
from nlgscore.meta.data.bench_records import BenchSet, load_bench_set
from nlgscore.meta.data.loaders import _jsonl
from nlgscore.meta.engine import Scorers, short_name
from nlgscore.meta.report import Row, text_table
from nlgscore.meta.stats.correlation import CORRELATIONS
from nlgscore.meta.stats.subsets import AUTHORS_SEED, authors_subsets, subset_wins, verdict
from nlgscore.meta.stats.wmt import darr_outcomes, tau_from_outcomes
from nlgscore.meta.tasks.generic import _lower_is_better as checked_lower_is_better
from nlgscore.meta.tasks.options import EVERY_TASK, RunOptions
from nlgscore.meta.tasks.runner import MetaTable, check_names, keep_finished, sources_of

PathLike = Union[str, "os.PathLike[str]"]
REFS_RULES = ("mean", "max", "first")
WMT_PAIRS = ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")


@dataclass(frozen=True)
class BenchTask:
    """One data set of the benchmark: where the authors keep it, its statistic and human aspects."""

    name: str
    folder: str  # SUM, D2T or WMT in the authors' repository
    statistic: str  # "summary", "accuracy", "pearson", "corpus" or "darr"
    aspects: Tuple[str, ...]  # the human scores the authors correlate with (their human_metrics)
    refs: str = "mean"  # how scores against several references combine (their score.py)


BENCH_SETS: Dict[str, BenchTask] = {
    t.name: t
    for t in (
        BenchTask("REALSumm", "SUM", "summary", ("litepyramid_recall",)),
        BenchTask("SummEval", "SUM", "summary", ("coherence", "consistency", "fluency", "relevance")),
        BenchTask("Newsroom", "SUM", "summary", ("coherence", "fluency", "informativeness", "relevance")),
        BenchTask("Rank19", "SUM", "accuracy", ("fact",)),
        BenchTask("QAGS_CNN", "SUM", "pearson", ("fact",)),
        BenchTask("QAGS_XSUM", "SUM", "pearson", ("fact",)),
        *(
            BenchTask(d, "D2T", "corpus", ("informativeness", "naturalness", "quality"), "max")
            for d in ("BAGEL", "SFHOT", "SFRES")
        ),
        *(BenchTask(lp, "WMT", "darr", ()) for lp in WMT_PAIRS),
    )
}
ALIASES = {"nerr18": "Newsroom", "ner18": "Newsroom", "qags-cnn": "QAGS_CNN", "qags-xsum": "QAGS_XSUM"}
# A data set that is not one of the 16 is evaluated by the shape of its records, on every score key.
STATISTIC_OF_KIND = {"summary": "summary", "d2t": "corpus", "darr": "darr"}
MEASURES = {  # (level, measures) per statistic; the first measure is the paper's (the significance test's)
    "summary": ("summary", ("spearman", "kendall")),
    "accuracy": ("summary", ("accuracy",)),
    "pearson": ("summary", ("pearson",)),
    "corpus": ("corpus", ("spearman", "kendall")),
    "darr": ("segment", ("tau",)),
}
# The paper's tables: (title, [(row dataset, column label)]); a column shows its task's first measure.
PAPER_TABLES = (
    ("Table 3: WMT19 DARR, Kendall's tau-like", [(lp, lp) for lp in WMT_PAIRS]),
    (
        "Table 4: summarisation, summary-level Spearman",
        [
            ("REALSumm-litepyramid_recall", "REALSumm COV"),
            ("SummEval-coherence", "SummEval COH"),
            ("SummEval-consistency", "FAC"),
            ("SummEval-fluency", "FLU"),
            ("SummEval-relevance", "INFO"),
            ("Newsroom-coherence", "NeR18 COH"),
            ("Newsroom-fluency", "FLU"),
            ("Newsroom-informativeness", "INFO"),
            ("Newsroom-relevance", "REL"),
        ],
    ),
    (
        "Table 5: factuality (Rank19 accuracy, QAGS Pearson)",
        [("Rank19", "Rank19"), ("QAGS_CNN", "QAGS-CNN"), ("QAGS_XSUM", "QAGS-XSUM")],
    ),
    (
        "Table 6: data-to-text, Spearman (informativeness)",
        [("BAGEL-informativeness", "BAGEL"), ("SFRES-informativeness", "SFRES"), ("SFHOT-informativeness", "SFHOT")],
    ),
)
NO_AVERAGE = ("Table 5",)  # the paper gives no average over the factuality columns
BEATS_ALL = "†"


def task_of(name: str) -> BenchTask:
    """The task called ``name`` (case-insensitive; NeR18, QAGS-CNN ... accepted), else one read by its
    records' shape (statistic ``""`` until the data are read)."""
    lowered = name.lower()
    for task in BENCH_SETS.values():
        if task.name.lower() == lowered:
            return task
    if lowered in ALIASES:
        return BENCH_SETS[ALIASES[lowered]]
    return BenchTask(name, "", "", ())


def _sets_in(root: Path) -> List[Tuple[str, Path]]:
    if root.is_file():
        stem = root.parent.name if root.name == "data.pkl" else root.stem
        known = [t.name for t in BENCH_SETS.values() if stem.lower().endswith(t.name.lower())]  # d2t-bagel.jsonl: BAGEL
        return [(max(known, key=len) if known else stem, root)]
    if (root / "data.pkl").is_file():
        return [(root.name, root / "data.pkl")]
    found = []
    for folder in sorted([*root.glob("*/data.pkl"), *root.glob("*/*/data.pkl")]):
        found.append((folder.parent.name, folder))
    return found


def find_sets(data: PathLike, tasks: Optional[Sequence[str]] = None) -> List[Tuple[BenchTask, Path]]:
    """The data sets under ``data`` (a ``data.pkl`` or JSONL file, a folder holding ``data.pkl``, or
    the authors' tree ``SUM/<set>/data.pkl`` ...), those named in ``tasks`` only, in the paper's order.

    Args:
        data: the file or folder (the command line's ``--data``).
        tasks: data-set names to keep (``--task``; default: every one found).

    Returns:
        ``(task, data file)`` pairs.

    Raises:
        FileNotFoundError: ``data`` does not exist or holds no data set.
        ArgumentError: a name in ``tasks`` is not among the data sets found.

    Example:
        >>> find_sets("/no/such/folder")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        FileNotFoundError: --data /no/such/folder: no such file or folder
    """
    root = Path(data)
    if not root.exists():
        raise FileNotFoundError(f"--data {root}: no such file or folder")
    found = [(task_of(name), path) for name, path in _sets_in(root)]
    if not found:
        raise FileNotFoundError(f"--data {root}: no data.pkl in it, nor in <set>/ or SUM|D2T|WMT/<set>/ folders")
    names = check_names(tasks, "tasks")
    if names:
        wanted = [task_of(n).name for n in names]
        missing = [n for n, w in zip(names, wanted) if w not in [t.name for t, _ in found]]
        if missing:
            raise ArgumentError(f"task(s) {missing} (--task) not in {root}; it holds {[t.name for t, _ in found]}")
        found = [(t, p) for t, p in found if t.name in wanted]
    order = list(BENCH_SETS)
    return sorted(found, key=lambda tp: order.index(tp[0].name) if tp[0].name in order else len(order))


def _resolved(task: BenchTask, data: BenchSet) -> BenchTask:
    """The task with its statistic and aspects checked against the records (or taken from them)."""
    statistic = task.statistic or STATISTIC_OF_KIND[data.kind]
    expected = {"summary": "summary", "accuracy": "summary", "pearson": "summary", "corpus": "d2t", "darr": "darr"}
    if expected[statistic] != data.kind:
        raise DataError(f"{data.path}: {task.name} holds {expected[statistic]} records, this file {data.kind} ones")
    aspects = task.aspects
    if not aspects and statistic != "darr":  # another data set: every score key is a human aspect
        aspects = tuple(sorted(data.scores[0][0]))
    if statistic == "accuracy":
        for record, systems in zip(data.ids, data.systems):
            if sorted(systems) != ["correct", "incorrect"]:
                raise DataError(f"{data.path}: record {record!r}: key 'sys_summs' must hold 'correct' and 'incorrect'")
    return BenchTask(
        task.name,
        task.folder or data.kind,
        statistic,
        aspects,
        task.refs if task.folder else ("max" if data.kind == "d2t" else "mean"),
    )


def _head(data: BenchSet, limit: Optional[int]) -> BenchSet:
    if limit is None:
        return data
    fields = ("ids", "srcs", "refs", "systems", "texts", "scores")
    return BenchSet(data.name, data.kind, data.path, **{f: getattr(data, f)[:limit] for f in fields})


# --- a metric's scores, per record and output -------------------------------------------------------


def _combine(values: Sequence[float], rule: str) -> float:
    if rule == "first":
        return values[0]
    if rule == "max":
        return max(values)
    total = 0.0
    for value in values:  # in reference order, as the authors add them up (P += curr_P, then / ref_num)
        total += value
    return total / len(values)


def score_set(data: BenchSet, spec: str, scorers: Scorers, rule: str) -> Tuple[List[List[float]], str]:
    """Metric ``spec``'s score of every output against every reference of its record, combined by ``rule``.

    Each distinct (output, reference, source) is scored once (a score does not depend on what else
    is scored with it).
    """
    unique: Dict[Tuple[str, str, str], int] = {}
    for src, refs, texts in zip(data.srcs, data.refs, data.texts):
        for text in texts:
            for ref in refs[:1] if rule == "first" else refs:
                unique.setdefault((text, ref, src), len(unique))
    triples = list(unique)
    flat, signature = scorers.score(
        spec, [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples], name=spec
    )
    out = []
    for src, refs, texts in zip(data.srcs, data.refs, data.texts):
        used = refs[:1] if rule == "first" else refs
        out.append([_combine([flat[unique[(t, r, src)]] for r in used], rule) for t in texts])
    return out, f"{signature}|refs:{rule}"


def _jsonl_scores(data: BenchSet, path: Path) -> List[List[float]]:
    wanted = {(record, system) for record, systems in zip(data.ids, data.systems) for system in systems}
    got: Dict[Tuple[str, str], float] = {}
    for where, record in _jsonl(path):
        if not isinstance(record, Mapping) or "id" not in record:
            raise DataError(f"{where}: missing key 'id'")
        rid = str(record["id"])
        if data.kind == "darr":
            entries = [(side, record.get(side), side) for side in ("better", "worse")]
        elif data.kind == "d2t":
            entries = [("", record.get("score"), "score")]
        else:
            if "system" not in record:
                raise DataError(f"{where}: missing key 'system'")
            entries = [(str(record["system"]), record.get("score"), "score")]
        for system, value, key in entries:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise DataError(f"{where}: key {key!r} must be a finite number, got {value!r}")
            if (rid, system) not in wanted:
                continue  # records a --limit left out, or another data set's
            if (rid, system) in got:
                raise DataError(f"{where}: a second score for record {rid!r} system {system!r}")
            got[(rid, system)] = float(value)
    missing = sorted(wanted - set(got))
    if missing:
        raise DataError(
            f"{path}: no score for record {missing[0][0]!r} system {missing[0][1]!r} ({len(missing)} missing)"
        )
    return [[got[(r, s)] for s in systems] for r, systems in zip(data.ids, data.systems)]


def read_scores(data: BenchSet, name: str, path: Any) -> Tuple[List[List[float]], str]:
    """A metric's precomputed scores: the authors' layout with the metric's key in every ``scores``
    (a ``.pkl`` such as their scored files), or JSON lines: ``{"id", "system", "score"}`` (summaries),
    ``{"id", "score"}`` (data-to-text), ``{"id", "better", "worse"}`` (DARR); ``{task}`` in the path
    is the data set's name."""
    file = Path(str(path).replace("{task}", data.name))
    if not file.is_file():
        raise FileNotFoundError(f"scores[{name!r}]: {file}: no such file")
    if file.suffix == ".pkl":
        scored = load_bench_set(file, data.name)
        by_id = {rid: (systems, entries) for rid, systems, entries in zip(scored.ids, scored.systems, scored.scores)}
        out = []
        for rid, systems in zip(data.ids, data.systems):
            if rid not in by_id:
                raise DataError(f"{file}: no record {rid!r} (the data set's)")
            their = dict(zip(*by_id[rid]))
            row = []
            for system in systems:
                if system not in their or name not in their[system]:
                    raise DataError(f"{file}: record {rid!r} system {system!r}: missing score key {name!r}")
                row.append(their[system][name])
            out.append(row)
        return out, f"scores:{file.name}"
    return _jsonl_scores(data, file), f"scores:{file.name}"


# --- the authors' statistics --------------------------------------------------------------------------


def _constant(values: np.ndarray) -> bool:
    return values.size < 1 or bool(np.ptp(values) == 0)  # their len(set(scores)) == 1


def per_document(human: List[List[float]], metric: List[List[float]], method: str) -> np.ndarray:
    """Per document the correlation across its systems; NaN where either side is constant (skipped)."""
    out = np.full(len(human), np.nan)
    for d, (h, m) in enumerate(zip(human, metric)):
        h_a, m_a = np.asarray(h, dtype=float), np.asarray(m, dtype=float)
        if not (_constant(h_a) or _constant(m_a)):
            out[d] = CORRELATIONS[method](h_a, m_a)
    return out


def _mean_kept(values: np.ndarray) -> float:
    kept = values[~np.isnan(values)]
    return float(np.mean(kept)) if kept.size else float("nan")


def _column(nested: List[List[float]], j: int) -> np.ndarray:
    return np.array([row[j] for row in nested], dtype=float)


def _flat(nested: List[List[float]]) -> np.ndarray:
    return np.array([v for row in nested for v in row], dtype=float)


def _correct_wins(data: BenchSet, metric: List[List[float]]) -> np.ndarray:
    at = [dict(zip(systems, row)) for systems, row in zip(data.systems, metric)]
    return np.array([a["correct"] > a["incorrect"] for a in at])


def statistics(task: BenchTask, data: BenchSet, metric: List[List[float]]) -> List[Tuple[str, str, float]]:
    """``(row dataset, measure, value)`` of every measure of ``task`` for one metric's scores."""
    level, measures = MEASURES[task.statistic]
    if task.statistic == "darr":
        return [(task.name, "tau", tau_from_outcomes(darr_outcomes(_column(metric, 0), _column(metric, 1))))]
    if task.statistic == "accuracy":
        return [(task.name, "accuracy", float(np.mean(_correct_wins(data, metric))))]
    out = []
    for aspect in task.aspects:
        human = data.key(aspect)
        for method in measures:
            if task.statistic == "summary":
                value = _mean_kept(per_document(human, metric, method))
            elif task.statistic == "pearson":  # the first system of each document (their sys_summs[0])
                value = CORRELATIONS["pearson"](_column(human, 0), _column(metric, 0))
            else:
                value = CORRELATIONS[method](_flat(human), _flat(metric))
            out.append((task.name if task.statistic == "pearson" else f"{task.name}-{aspect}", method, float(value)))
    return out


def _subset_statistics(task: BenchTask, data: BenchSet, aspect: str) -> Callable[..., Callable[[np.ndarray], float]]:
    """For the significance test of one column: (metric scores, the other metric's) -> (subset ->
    statistic), a subset being record positions in the authors' visiting order. Summary level: the
    documents skipped are those where either metric or the human scores are constant (their
    ``sig_test_two``)."""
    if task.statistic == "darr":

        def darr(m: List[List[float]], other: List[List[float]]) -> Callable[[np.ndarray], float]:
            better, worse = _column(m, 0), _column(m, 1)
            return lambda s: tau_from_outcomes(darr_outcomes(better[s], worse[s]))

        return darr
    if task.statistic == "accuracy":

        def accuracy(m: List[List[float]], other: List[List[float]]) -> Callable[[np.ndarray], float]:
            wins = _correct_wins(data, m)
            return lambda s: float(np.sum(wins[s]))  # their counts of correct documents

        return accuracy
    human = data.key(aspect)
    if task.statistic in ("pearson", "corpus"):
        method = "pearson" if task.statistic == "pearson" else "spearman"
        pick = (lambda x: _column(x, 0)) if task.statistic == "pearson" else _flat  # QAGS: sys_summs[0]
        h = pick(human)

        def corpus(m: List[List[float]], other: List[List[float]]) -> Callable[[np.ndarray], float]:
            values = pick(m)
            return lambda s: CORRELATIONS[method](h[s], values[s])

        return corpus

    def summary(m: List[List[float]], other: List[List[float]]) -> Callable[[np.ndarray], float]:
        mine, theirs = per_document(human, m, "spearman"), per_document(human, other, "spearman")
        both = ~np.isnan(mine) & ~np.isnan(theirs)
        return lambda s: float(np.mean(mine[s[both[s]]])) if both[s].any() else float("nan")

    return summary


@dataclass
class BenchTable(MetaTable):
    """The rows of a run and the paper's tables of them (``str``); ``to_dict`` adds ``tables``."""

    beats_all: Dict[Tuple[str, str], bool] = field(default_factory=dict)  # (row dataset, metric)
    significance: List[Dict[str, Any]] = field(default_factory=list)  # one per column and two metrics

    def tables(self) -> List[Dict[str, Any]]:
        """The paper's tables of the rows present: per table its columns and, per metric, the values."""
        first: Dict[str, str] = {}
        for row in self.rows:
            first.setdefault(row.dataset, row.measure)
        values = {(r.dataset, r.metric): r.value for r in self.rows if r.measure == first[r.dataset]}
        metrics = list(dict.fromkeys(r.metric for r in self.rows))
        known = {d for _, columns in PAPER_TABLES for d, _ in columns}
        others = [(d, f"{d} {m}") for d, m in first.items() if d not in known and not _d2t_other(d)]
        out = []
        for title, columns in (*PAPER_TABLES, ("Other data sets (first measure)", others)):
            present = [(d, label) for d, label in columns if d in first]
            if not present:
                continue
            rows = []
            for metric in metrics:
                cells = [values.get((d, metric), math.nan) for d, _ in present]
                average = not title.startswith(NO_AVERAGE) and len(present) > 1
                rows.append(
                    {
                        "metric": metric,
                        "values": cells,
                        "average": float(np.mean(cells)) if average else None,
                        "beats_all": [self.beats_all.get((d, metric), False) for d, _ in present],
                    }
                )
            out.append(
                {
                    "title": title,
                    "columns": [label for _, label in present],
                    "datasets": [d for d, _ in present],
                    "rows": rows,
                }
            )
        return out

    def __str__(self) -> str:
        parts = []
        for table in self.tables():
            averaged = any(r["average"] is not None for r in table["rows"])
            header = ["metric", *table["columns"], *(["Avg"] if averaged else [])]
            lines = []
            for row in table["rows"]:
                cells = [
                    ("n/a" if math.isnan(v) else f"{v:.3f}") + (BEATS_ALL if mark else "")
                    for v, mark in zip(row["values"], row["beats_all"])
                ]
                if averaged:
                    cells.append(
                        "n/a" if row["average"] is None or math.isnan(row["average"]) else f"{row['average']:.3f}"
                    )
                lines.append([row["metric"], *cells])
            parts.append(f"{table['title']}\n{text_table(header, lines)}")
        return "\n\n".join([*parts, "\n".join(self.notes)]).rstrip()

    def to_dict(self) -> Dict[str, Any]:
        """The rows as every meta table gives them, with the paper's tables (``tables``) and the
        significance test of every two metrics of a column (``significance``: A's wins of B)."""
        return {**super().to_dict(), "tables": self.tables(), "significance": list(self.significance)}

    to_json = to_dict


def _d2t_other(dataset: str) -> bool:  # D2T's naturalness and quality: rows, not a column of Table 6
    return any(dataset.startswith(f"{d}-") for d in ("BAGEL", "SFHOT", "SFRES")) and not dataset.endswith(
        "informativeness"
    )


def _significance(
    table: BenchTable, task: BenchTask, data: BenchSet, kept: Dict[str, List[List[float]]], iterations: int, seed: int
) -> None:
    names = list(kept)
    if iterations <= 0 or len(names) < 2:
        return
    subsets = authors_subsets(data.items, iterations, seed=seed)
    for aspect in task.aspects or ("",):
        dataset = task.name if task.statistic in ("darr", "accuracy", "pearson") else f"{task.name}-{aspect}"
        statistic = _subset_statistics(task, data, aspect)
        beaten = {n: False for n in names}
        beats = {n: 0 for n in names}
        lines = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                wins = subset_wins(statistic(kept[a], kept[b]), statistic(kept[b], kept[a]), subsets)
                outcome = verdict(wins, iterations)
                table.significance.append(
                    dict(dataset=dataset, a=a, b=b, wins=wins, subsets=iterations, verdict=outcome, seed=seed)
                )
                if outcome:
                    winner, loser = (a, b) if outcome > 0 else (b, a)
                    beaten[loser], beats[winner] = True, beats[winner] + 1
                    lines.append(
                        f"    {winner} significantly beats {loser} ({a} higher on {wins} of {iterations} subsets)"
                    )
        for n in names:
            table.beats_all[(dataset, n)] = beats[n] == len(names) - 1
        best = [n for n in names if not beaten[n]]
        table.notes.append(f"  {dataset}: best (significantly beaten by none): {', '.join(best)}")
        table.notes += lines


# the run settings the benchmark reads (``RunOptions`` fields): every task's and these
BENCH_READS = EVERY_TASK + ("bootstrap",)


def bartscore_bench(
    data: PathLike,
    metrics: Sequence[str] = (),
    scores: Optional[Mapping[str, PathLike]] = None,
    *,
    tasks: Optional[Sequence[str]] = None,
    refs: Optional[str] = None,
    options: Optional[RunOptions] = None,
    **settings: Any,
) -> BenchTable:
    """The BARTScore benchmark's statistics for ``metrics`` and precomputed ``scores``, on the data sets in ``data``.

    Args:
        data: a data set's ``data.pkl`` or JSONL file, its folder, or the authors' tree of folders.
        metrics: registry metric specs, scored here against every reference of each record.
        scores: metric name -> precomputed scores (see ``read_scores``; ``{task}`` in a path).
        tasks: data sets to evaluate (default: every one in ``data``).
        refs: how scores against several references combine: ``mean``, ``max`` or ``first``
            (default: the authors' rule, mean for summaries and max for data-to-text).
        options: the run settings: ``bootstrap``, subsets of the significance test (the paper's
            1,000; 0: no test); ``seed`` of the subsets (the authors' 666); ``limit``, only the
            first ``limit`` records of each data set; ``progress``; ``load_options`` of
            ``nlgscore.load`` for model-based metrics; ``scorers`` (and score cache) to use;
            ``lower_is_better``, names of metrics whose scores are error rates: negated before
            every statistic (registry metrics that say ``lower_is_better``, TER, are negated
            without it).
        **settings: those settings as keywords instead (``bootstrap`` 1000 and ``seed`` 666 by
            default then).

    Returns:
        A ``BenchTable``: rows per data set, aspect, measure and metric; notes with the significance.

    Raises:
        ArgumentError: a bad option (no metric, an unknown task or ``refs`` rule).
        DataError: a malformed data or scores file (named with the record and key).
        FileNotFoundError: ``data`` or a scores file does not exist.

    Example:
        >>> import json, tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = Path(folder) / "d2t-toy.jsonl"
        ...     rows = [{"id": i, "src": "s", "refs": ["the cat sat"], "text": t, "scores": {"quality": q}}
        ...             for i, (t, q) in enumerate([("the cat sat", 5), ("a cat sat", 3), ("dogs", 1)])]
        ...     _ = path.write_text("".join(json.dumps(r) + "\\n" for r in rows))
        ...     table = bartscore_bench(path, ["chrf"], bootstrap=0)
        >>> [(r.dataset, r.measure, r.value) for r in table.rows]
        [('d2t-toy-quality', 'spearman', 1.0), ('d2t-toy-quality', 'kendall', 1.0)]
    """
    if refs is not None and refs not in REFS_RULES:
        raise ArgumentError(f"refs must be one of {REFS_RULES} (--refs), got {refs!r}")
    opts = RunOptions.given(options, settings, "bartscore_bench", BENCH_READS, bootstrap=1000, seed=AUTHORS_SEED)
    run, sources, limit = opts.run(), sources_of(metrics, scores), opts.limit
    turned = checked_lower_is_better(opts.lower_is_better, sources)
    found = find_sets(data, tasks)
    scorers = opts.scorers_in_use()
    table = BenchTable("bartscore-bench")
    with keep_finished(table, run, sources):
        for named, path in found:
            bench = _head(load_bench_set(path, named.name), limit)
            task = _resolved(named, bench)
            rule = refs or task.refs
            level = MEASURES[task.statistic][0]
            kept: Dict[str, List[List[float]]] = {}
            for name, file in run.each(sources, functools.partial(_progress_line, task.name, bench.items)):
                metric, signature = (
                    score_set(bench, name, scorers, rule) if file is None else read_scores(bench, name, file)
                )
                if name in turned or (file is None and scorers.lower_is_better(name)):
                    metric, signature = [[-v for v in row] for row in metric], f"{signature}|lower-is-better:negated"
                kept[short_name(name)] = metric
                for dataset, measure, value in statistics(task, bench, metric):
                    table.rows.append(
                        Row(
                            dataset,
                            short_name(name),
                            level,
                            measure,
                            value,
                            signature=f"{signature}|bartscore-bench:{task.statistic}",
                        )
                    )
            table.notes.append(f"{task.name}: {bench.items} records ({task.statistic}; {path})")
            _significance(table, task, bench, kept, run.bootstrap, run.seed)
    if run.bootstrap > 0 and len(sources) > 1:
        table.notes.append(
            f"{BEATS_ALL}: significantly better than every other metric in the column "
            f"(BARTScore's test: {run.bootstrap} subsets of 80% of the records, seed {run.seed}; wins > 95%)"
        )
    return table


def _progress_line(task: str, records: int, metric: str) -> str:
    """The progress bar's line while ``metric`` is scored on ``task``."""
    return f"{task}: {metric} ({records} records)"
