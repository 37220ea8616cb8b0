"""Model selection over hybrid systems (the BERTScore paper, Sec. 4): ``nlgscore meta select-model``.

Per data set, ``hybrids`` hybrid systems are super-sampled from the systems' segment scores
(Graham and Liu 2016: each hybrid takes every segment from one of two random systems; its human
score is the mean of the sampled segments' human judgments, its metric score the mean of their
metric scores: :func:`~nlgscore.meta.stats.wmt.hybrid_systems`). Then ``sample_size`` hybrids
are drawn ``repeats`` times and the metric picks its best one: Hits@1 (the human best), MRR (of
the human rank of the metric's pick) and Diff (the human score lost by the pick:
:func:`~nlgscore.meta.stats.wmt.model_selection`). Every metric sees the same hybrids and the
same draws (one seed), so their rows compare.

>>> settings = SelectModel(hybrids=50, sample_size=10, repeats=20)
>>> settings.signature
'|hybrids:50|sample:10|repeats:20|seed:12345'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from nlgscore.errors import ArgumentError, ArgumentTypeError, DataError
from nlgscore.meta.data.model import EvalSet
from nlgscore.meta.report import Row
from nlgscore.meta.stats.resample import check_seed
from nlgscore.meta.stats.wmt import hybrid_systems, model_selection

HYBRIDS = 10_000  # WMT18's hybrid super-sampling and the BERTScore paper: 10K hybrid systems
SAMPLE_SIZE = 100  # BERTScore: "randomly sample 100 hybrid systems"
REPEATS = 100_000  # BERTScore: "repeat this process 100K times"
SELECTION_SEED = 12345
MEASURES = ("hits@1", "mrr", "diff")  # the rows of each metric, level "hybrid"


def _count(value: object, name: str, flag: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be an integer >= {minimum} ({flag}), got {value!r}")
    if value < minimum:
        raise ArgumentError(f"{name} must be an integer >= {minimum} ({flag}), got {value}")
    return int(value)


@dataclass(frozen=True)
class SelectModel:
    """Settings of a model-selection run: how many hybrids, how many drawn at a time, how often.

    Args:
        hybrids: hybrid systems super-sampled per data set (``--hybrids``, 10,000 as WMT18).
        sample_size: hybrids drawn per repeat, of which the metric picks one (``--sample-size``, 100).
        repeats: draws (``--repeats``, 100,000 as the BERTScore paper).
        seed: seed of the hybrids and of the draws (``--seed``).

    Raises:
        ArgumentError: a count below its minimum, or ``sample_size`` above ``hybrids``.
        ArgumentTypeError: a count that is not an integer.

    Example:
        >>> SelectModel(hybrids=10, sample_size=20)
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentError: sample_size (--sample-size) must be at most hybrids (--hybrids): 20 > 10
    """

    hybrids: int = HYBRIDS
    sample_size: int = SAMPLE_SIZE
    repeats: int = REPEATS
    seed: int = SELECTION_SEED

    def __post_init__(self) -> None:
        _count(self.hybrids, "hybrids", "--hybrids", 2)
        _count(self.sample_size, "sample_size", "--sample-size", 2)
        _count(self.repeats, "repeats", "--repeats", 1)
        check_seed(self.seed)
        if self.sample_size > self.hybrids:
            raise ArgumentError(
                f"sample_size (--sample-size) must be at most hybrids (--hybrids): {self.sample_size} > {self.hybrids}"
            )

    @property
    def signature(self) -> str:
        """What the rows' signatures add: the counts and the seed."""
        return f"|hybrids:{self.hybrids}|sample:{self.sample_size}|repeats:{self.repeats}|seed:{self.seed}"


def selection_rows(
    settings: SelectModel,
    data: EvalSet,
    level: str,
    seg: Optional[np.ndarray],
    metric: str,
    signature: str,
    dataset: str,
) -> List[Row]:
    """Hits@1, MRR and Diff of one metric's ``(systems, items)`` segment scores on ``data``.

    Args:
        settings: the counts and the seed.
        data: the data set; ``data.human[level]`` are the ``(systems, items)`` human judgments the
            hybrids average (NaN where a segment was not judged).
        level: the human level of the hybrids (``"segment"``; WMT21 DA: ``"z"``).
        seg: the metric's segment scores, higher is better (None: a system-level score file).
        metric: the metric's name in the rows.
        signature: the metric's signature; the settings are appended.
        dataset: the rows' data-set name.

    Returns:
        Three rows (level ``hybrid``): ``hits@1``, ``mrr`` and ``diff``.

    Raises:
        DataError: no segment scores, or no segment-level human judgments in ``data``.

    Example:
        >>> data = EvalSet("toy", ["A", "B", "C"], [["a", "b"]] * 3, [["a", "b"]],
        ...                human={"segment": np.array([[1.0, 2.0], [3.0, 1.0], [0.0, 0.0]])})
        >>> rows = selection_rows(SelectModel(20, 5, 10), data, "segment", data.human["segment"] * 2,
        ...                       "twice", "", "toy")
        >>> [(r.measure, r.value) for r in rows]
        [('hits@1', 1.0), ('mrr', 1.0), ('diff', 0.0)]
    """
    if seg is None:
        raise DataError(f"{metric}: system scores only; model selection over hybrids needs segment scores")
    if level not in data.human:
        raise DataError(f"{data.name}: no {level!r} human judgments to build hybrid systems from")
    judged = (~np.isnan(data.human[level])).any(axis=1)  # a system without judgments makes no hybrid
    human, scores = hybrid_systems(data.human[level][judged], seg[judged], settings.hybrids, seed=settings.seed)
    chosen = model_selection(human, scores, settings.sample_size, settings.repeats, seed=settings.seed)
    signature += settings.signature
    values = (chosen.hits_at_1, chosen.mrr, chosen.diff)
    return [Row(dataset, metric, "hybrid", name, value, signature=signature) for name, value in zip(MEASURES, values)]
