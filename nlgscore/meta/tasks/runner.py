"""What every meta-evaluation task shares: the result table, the run options, the metric loop.

``MetaTable`` holds the rows (``dataset, level, measure, metric, value`` + CI + signature) and
notes of one run; it prints as text, JSON (``to_dict``) and TSV (``rows()``) through
``nlgscore.cli.output.emit``. ``Run`` is one run's resampling settings and ties rule (built by
``RunOptions.run``, ``options``, where the settings every task takes are checked); ``Run.each``
walks the metrics and remembers which finished, so an interrupted run (Ctrl-C, or an error in one metric) still returns the rows of those
(``keep_finished``: the exception carries ``partial_table``).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

import numpy as np

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.meta.data.precomputed import segment_and_system
from nlgscore.meta.report import UNDEFINED, Row, format_table, text_table, to_json
from nlgscore.meta.stats.resample import (
    bootstrap_ci,
    check_resamples,
    check_seed,
    paired_bootstrap,
)
from nlgscore.meta.stats.wmt import TIES_RULES, tau_from_outcomes

SIGNIFICANCE_LEVEL = 0.05
SUMMARY_MEASURES = (("system", "spa"), ("segment", "acc-t"))  # WMT24's two columns, averaged


class Rows(list):
    """The table's ``Row`` list; calling it gives the JSON-ready dicts (``MetaTable.rows()``)."""

    def __call__(self) -> List[Dict[str, Any]]:
        return to_json(self)["results"]


@dataclass
class MetaTable:
    """Rows of one meta-evaluation run and the notes that go with them.

    Attributes:
        task: the task's name (``wmt19``, ``summeval``), as the report names it.
        rows: the run's rows, one per data set, metric, level and measure; calling ``rows()`` gives
            them as JSON-ready dicts.
        notes: what the report says beside the rows (data fixes, systems left out, significance).
    """

    task: str
    rows: Rows = field(default_factory=Rows)
    notes: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rows = Rows(self.rows)

    def summary(self) -> List[Dict[str, Any]]:
        """WMT24-style summary: per data set and metric, SPA, acc-t and their average (when both exist)."""
        values = {(r.dataset, r.metric, r.level, r.measure): r.value for r in self.rows}
        out = []
        for dataset, metric in dict.fromkeys((r.dataset, r.metric) for r in self.rows):
            parts = [values.get((dataset, metric, level, measure)) for level, measure in SUMMARY_MEASURES]
            if all(p is not None for p in parts):
                out.append(
                    {
                        "dataset": dataset,
                        "metric": metric,
                        "spa": parts[0],
                        "acc-t": parts[1],
                        "average": float(np.mean([float(p) for p in parts if p is not None])),
                    }
                )
        return out

    def __str__(self) -> str:
        lines = [format_table(self.rows)]
        summary = self.summary()
        if summary:
            lines.append("\nsummary (WMT24: system SPA, segment acc-t and their average)")
            lines.append(
                text_table(
                    ("dataset", "metric", "spa", "acc-t", "average"),
                    [
                        (s["dataset"], s["metric"], f"{s['spa']:.4f}", f"{s['acc-t']:.4f}", f"{s['average']:.4f}")
                        for s in summary
                    ],
                )
            )
        notes = list(self.notes)
        if any(math.isnan(r.value) for r in self.rows) and not any(n.startswith(f"{UNDEFINED}:") for n in notes):
            notes.append(f"{UNDEFINED}: undefined for these scores (e.g. a correlation with a constant side)")
        return "\n".join([*lines, *notes])

    def to_dict(self) -> Dict[str, Any]:
        """``{"task", "results": [row, ...], "summary": [...], "notes": [...]}`` (NaN as None)."""
        return {"task": self.task, **to_json(self.rows), "summary": self.summary(), "notes": list(self.notes)}

    to_json = to_dict

    def to_pandas(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(to_json(self.rows)["results"])


def check_limit(limit: Any) -> Optional[int]:
    """``limit`` as the CLI's ``--limit`` takes it: None or an integer >= 1.

    >>> check_limit(5), check_limit(None)
    (5, None)
    >>> check_limit(-10)
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: limit must be a positive integer (--limit N), got -10
    """
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)):
        raise ArgumentTypeError(f"limit must be a positive integer (--limit N), got {limit!r}")
    if limit < 1:
        raise ArgumentError(f"limit must be a positive integer (--limit N), got {limit}")
    return int(limit)


def check_names(value: Any, name: str) -> List[str]:
    """A list of strings given as ``name`` (a lone string is a mistake, not a list of characters).

    >>> check_names(("chrf", "bleu"), "metrics")
    ['chrf', 'bleu']
    >>> check_names("sentbleu", "metrics")
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentTypeError: metrics must be a list of strings, got 'sentbleu'
    """
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not all(isinstance(v, str) for v in value):
        raise ArgumentTypeError(f"{name} must be a list of strings, got {value!r}")
    return list(value)


@dataclass
class Run:
    """Options every task shares, validated once (the messages of the command line)."""

    bootstrap: int
    seed: int
    progress: bool
    ties: str = "discordant"
    completed: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bootstrap = check_resamples(self.bootstrap, "bootstrap", "--bootstrap")
        self.seed = check_seed(self.seed)
        if self.ties not in TIES_RULES:
            raise ArgumentError(f"ties must be one of {TIES_RULES}, got {self.ties!r}")

    def check_items(self, n: int, what: str, limit: Optional[int]) -> None:
        """The bootstrap resamples ``n`` items and needs 2: say so, naming ``limit`` when it cut them."""
        if self.bootstrap > 0 and n < 2:
            cause = f"limit={limit} leaves" if limit is not None else "the data hold"
            raise ArgumentError(
                f"{cause} {n} {what}; the bootstrap needs at least 2: raise limit (--limit) "
                "or set bootstrap=0 (--bootstrap 0)"
            )

    def row(self, statistic: Callable[..., float], data: Tuple[np.ndarray, ...], **fields: str) -> Row:
        value = float(statistic(*data))
        low = high = float("nan")
        if self.bootstrap > 0:
            interval = bootstrap_ci(statistic, data, n_samples=self.bootstrap, seed=self.seed)
            low, high = interval.low, interval.high
            fields["signature"] += f"|bootstrap:{self.bootstrap}|seed:{self.seed}"
        return Row(value=value, ci_low=low, ci_high=high, **fields)

    def tau(self, outcomes: np.ndarray) -> float:
        return tau_from_outcomes(outcomes, self.ties)

    def beaten(
        self, per_metric: Mapping[str, np.ndarray], statistic: Callable[[np.ndarray], float], what: str
    ) -> List[str]:
        """Paired bootstrap of ``statistic`` between every two metrics: who significantly beats whom.

        Items that are NaN for either metric (documents without a correlation) are left out.
        """
        if self.bootstrap <= 0 or len(per_metric) < 2:
            return []
        lines = []
        for a, b in itertools.permutations(per_metric, 2):
            both = ~np.isnan(per_metric[a].astype(float)) & ~np.isnan(per_metric[b].astype(float))
            if both.sum() < 2:
                continue
            test = paired_bootstrap(
                statistic, (per_metric[a][both],), (per_metric[b][both],), self.bootstrap, self.seed
            )
            if test.p_value < SIGNIFICANCE_LEVEL:
                lines.append(f"  {a} significantly beats {b} on {what} (paired bootstrap, p={test.p_value:.3f})")
        return lines or [f"  {what}: no significant differences between metrics (paired bootstrap, p<0.05)"]

    def each(self, sources: Sequence[Tuple[str, Any]], describe: Callable[[str], str]) -> Iterator[Tuple[str, Any]]:
        """``sources`` one by one under a progress bar; a metric counts as completed once its loop
        body has run (the generator resumes only then)."""
        from nlgscore.backend.progress import progress_bar

        with progress_bar(total=len(sources), enabled=self.progress, unit="metric", leave=False) as bar:
            for name, path in sources:
                bar.set_description(describe(name))
                yield name, path
                self.completed.append(name)
                bar.update()


@contextlib.contextmanager
def keep_finished(table: MetaTable, run: Run, sources: Sequence[Tuple[str, Any]]) -> Iterator[MetaTable]:
    """On any exception (KeyboardInterrupt included) keep only the rows of metrics that completed
    every data set, note what stopped the run, attach the table as ``err.partial_table``, re-raise."""
    try:
        yield table
    except BaseException as err:
        counts = {name: run.completed.count(name) for name, _ in sources}
        most = max(counts.values(), default=0)
        finished = {name for name, count in counts.items() if count == most and count > 0}
        table.rows = Rows(r for r in table.rows if r.metric in finished)
        stopped = "interrupted" if isinstance(err, KeyboardInterrupt) else f"stopped by an error ({err})"
        table.notes.append(
            f"INCOMPLETE: run {stopped}; rows of finished metrics only: {', '.join(sorted(finished)) or 'none'}"
        )
        err.partial_table = table  # type: ignore[attr-defined]
        raise


def sources_of(
    metrics: Any, scores: Optional[Mapping[str, Any]], system_files: bool = False
) -> List[Tuple[str, Optional[Any]]]:
    """``(name, score file or None)`` per metric, specs first; names must be unique.

    A score file is a path; with ``system_files`` (tasks with systems) also ``"SEG,SYS"`` or a
    ``(segment file, system file)`` pair. Anything else is refused here, before any scoring.

    >>> sources_of(["chrf"], {"mine": "mine.tsv"})
    [('chrf', None), ('mine', 'mine.tsv')]
    """
    specs = check_names(metrics, "metrics")
    if scores is not None and not isinstance(scores, Mapping):
        raise ArgumentTypeError(f"scores must map a metric name to a score file, got {scores!r}")
    sources = [(spec, None) for spec in specs] + [(name, path) for name, path in (scores or {}).items()]
    for name, path in sources[len(specs) :]:
        if system_files:
            segment_and_system(name, path)
        elif not isinstance(path, (str, os.PathLike)):
            raise ArgumentTypeError(f"scores[{name!r}] must be a score file path, got {path!r}")
    if not sources:
        raise ArgumentError(
            "give at least one metric to evaluate: metrics=[SPEC] or scores={NAME: FILE} "
            "(command line: at least one --metric SPEC or --scores NAME=FILE)"
        )
    from nlgscore.meta.engine import short_name

    names = [short_name(name) for name, _ in sources]  # as the tables name them
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ArgumentError(
            f"metric name(s) {repeated} given more than once (checkpoints in different folders "
            "with one name: name the scores with --scores NAME=FILE)"
        )
    return sources
