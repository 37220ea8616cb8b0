"""The settings every meta-evaluation task shares, as one checked, frozen object: ``RunOptions``.

A task function takes ``options: RunOptions`` and only its data set's own arguments; the command
line builds the object once from its flags. Each value is checked when the object is built, with
the message that names its argument and flag, so a bad setting fails before any data are read.
The task functions still take these settings as keywords (``wmt21(data, metrics=["chrf"],
bootstrap=0)``): ``given`` builds the object from them, with the task's own defaults.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.meta.engine import Scorers
from nlgscore.meta.stats.resample import DEFAULT_SEED, check_resamples, check_seed
from nlgscore.meta.stats.top_k import check_top_k
from nlgscore.meta.tasks.runner import Run, check_limit
from nlgscore.meta.tasks.select_model import SelectModel


def check_context_value(context: Any) -> int:
    """``context`` (``--context K``) as an integer >= 0; whether the data set has documents is the task's check.

    >>> check_context_value(2)
    2
    >>> check_context_value(-1)
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: context must be >= 0 (--context K: previous segments to read), got -1
    """
    if isinstance(context, bool) or not isinstance(context, (int, np.integer)):
        raise ArgumentTypeError(f"context must be an integer >= 0 (--context K), got {context!r}")
    if context < 0:
        raise ArgumentError(f"context must be >= 0 (--context K: previous segments to read), got {context}")
    return int(context)


def _names(names: Any) -> Tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in names):
        raise ArgumentTypeError(f"lower_is_better must be a list of metric names, got {names!r}")
    return tuple(names)


@dataclass(frozen=True)
class RunOptions:
    """The run settings every meta-evaluation task shares, checked once when built.

    A task reads the settings it has (``wmt19`` has no ``top_k``); one it has not, set away from
    its default, is refused by the task, naming it.

    Attributes:
        bootstrap: resamples of the bootstrap confidence intervals and paired tests (``--bootstrap
            N``; 0: values alone).
        permutations: resamples of the permutation tests between metrics (``--permutations N``;
            0: none).
        seed: the seed of every resampling (``--seed``; sacreBLEU's default).
        limit: only the first ``limit`` items (pairs, segments or documents; ``--limit N``; None: all).
        progress: draw a progress bar per metric and data set.
        load_options: options of every scorer built from the metric specs (``device``, ``batch_size``).
        scorers: the scorers (and score cache) to build metrics with; None: new ones from
            ``load_options`` (``with_scorers``).
        export_mtme: a folder the scored metrics' scores are written to as mt-metrics-eval files.
        export_scores: another such folder (``--export-scores DIR``).
        context: previous segments of its document each scored segment is read after
            (``--context K``; data sets with documents only).
        top_k: every system-level measure again over the ``top_k`` best systems by human score
            (``--top-k K``; None: no such rows).
        lower_is_better: names of metrics whose scores are error rates, negated before every
            measure (``--lower-is-better NAME``).
        select_model: Hits@1, MRR and Diff over hybrid systems instead of the measures
            (``nlgscore meta select-model``).

    Example:
        >>> options = RunOptions(bootstrap=0, limit=5)
        >>> options.limit, options.seed, options.top_k
        (5, 12345, None)
        >>> RunOptions(limit=0)
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: limit must be a positive integer (--limit N), got 0
    """

    bootstrap: int = 0
    permutations: int = 0
    seed: int = DEFAULT_SEED
    limit: Optional[int] = None
    progress: bool = False
    load_options: Optional[Mapping[str, Any]] = None
    scorers: Optional[Scorers] = None
    export_mtme: Any = None
    export_scores: Any = None
    context: int = 0
    top_k: Optional[int] = None
    lower_is_better: Sequence[str] = ()
    select_model: Optional[SelectModel] = None

    def __post_init__(self) -> None:
        checked = dict(
            bootstrap=check_resamples(self.bootstrap, "bootstrap", "--bootstrap"),
            permutations=check_resamples(self.permutations, "permutations", "--permutations"),
            seed=check_seed(self.seed),
            limit=check_limit(self.limit),
            context=check_context_value(self.context),
            top_k=check_top_k(self.top_k),
            lower_is_better=_names(self.lower_is_better),
        )
        if self.select_model is not None and not isinstance(self.select_model, SelectModel):
            raise ArgumentTypeError(
                f"select_model must be a SelectModel (its counts and seed), got {self.select_model!r}"
            )
        for name, value in checked.items():  # frozen: the checked values are set once, here
            object.__setattr__(self, name, value)

    @classmethod
    def given(
        cls,
        options: Optional["RunOptions"],
        keywords: Mapping[str, Any],
        task: str,
        reads: Sequence[str],
        **defaults: Any,
    ) -> "RunOptions":
        """``options``, or one built from the settings given as ``keywords`` over the task's ``defaults``.

        Args:
            options: the options the caller built, or None.
            keywords: the settings given as keywords instead (fields of ``RunOptions``).
            task: the task's name, as the errors name it.
            reads: the settings ``task`` reads; a keyword it has not is refused as Python refuses
                one (a ``TypeError``), as is a setting of ``options`` it has not, away from its
                default.
            **defaults: the task's defaults of the keywords (``bootstrap=1000``).

        Returns:
            ``options``, or the options built from ``keywords`` over ``defaults``.

        Raises:
            ArgumentError: ``options`` together with keywords, a setting ``task`` does not take,
                or a value out of range.
            ArgumentTypeError: a keyword ``task`` does not take, or ``options`` not a ``RunOptions``.

        Example:
            >>> RunOptions.given(None, {"limit": 3}, "toy", ("limit", "bootstrap"), bootstrap=1000).bootstrap
            1000
            >>> RunOptions.given(None, {"top_k": 4}, "toy", ("limit",))
            Traceback (most recent call last):
            ...
            nlgscore.errors.ArgumentTypeError: toy() got an unexpected keyword argument 'top_k'
        """
        unknown = [name for name in keywords if name not in reads]
        if unknown:
            raise ArgumentTypeError(f"{task}() got an unexpected keyword argument {unknown[0]!r}")
        if options is None:
            return cls(**{**defaults, **keywords})
        if not isinstance(options, RunOptions):
            raise ArgumentTypeError(f"options must be a RunOptions, got {options!r}")
        if keywords:
            raise ArgumentError(
                f"{task}: give the run settings in options=RunOptions(...) or as keywords, not both "
                f"(keywords: {sorted(keywords)})"
            )
        unread = [
            f.name for f in dataclasses.fields(cls) if f.name not in reads and getattr(options, f.name) != f.default
        ]
        if unread:
            raise ArgumentError(f"{task} does not take {', '.join(unread)} (it takes {', '.join(reads)})")
        return options

    def scorers_in_use(self) -> Scorers:
        """``scorers``, else new ones built with ``load_options``."""
        return self.scorers if self.scorers is not None else Scorers(dict(self.load_options or {}))

    def with_scorers(self) -> "RunOptions":
        """These options with ``scorers`` set (``scorers_in_use``): one set for every data set of a task."""
        return self if self.scorers is not None else dataclasses.replace(self, scorers=self.scorers_in_use())

    def run(self, ties: str = "discordant") -> Run:
        """The run these options start: its resampling settings, progress bar and finished metrics.

        Args:
            ties: how a metric tie on a daRR pair counts (``"discordant"`` or ``"exclude"``).

        Returns:
            A new ``Run``, no metric finished yet.

        Example:
            >>> RunOptions(bootstrap=10).run().bootstrap
            10
        """
        return Run(self.bootstrap, self.seed, self.progress, ties)


RUN_OPTIONS = tuple(f.name for f in dataclasses.fields(RunOptions))
# the settings every task reads; each task adds its own (``bootstrap`` or ``permutations`` ...)
EVERY_TASK = ("seed", "limit", "progress", "load_options", "scorers", "lower_is_better")
