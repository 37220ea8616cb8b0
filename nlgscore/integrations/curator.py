"""NeMo Curator stages: score the rows of each ``DocumentBatch``, or keep those above a threshold.

NeMo Curator's text pipelines pass ``DocumentBatch`` tasks (a table of documents) from stage to
stage. Its filters score one document at a time and read one text field; a translation quality
filter reads two (a source and its translation, or a text and its reference) and wants the
model's batches, which :func:`score_stage` and :func:`threshold_filter` give: BERTScore between
two columns, or Prism-src / BARTScore-src as a reference-free quality estimate of parallel data.

Both are ``ProcessingStage[DocumentBatch, DocumentBatch]`` instances: each worker builds the scorer
once (in the stage's ``setup``, on an actor), scores a whole batch in one call in row order (so
document context holds for documents wholly inside a batch) and adds the score columns
(``<prefix>_<name>``). A score does not depend on the batching, so any split of the corpus into
tasks gives the bits of one offline ``compute``. A row the metric refuses fails the stage (and
the pipeline) with the error an offline call raises.

Running them needs NeMo Curator (``pip install 'nlgscore[curator]'``); the stage classes are made
on first use (:func:`stage_classes`), so importing this module does not import it:

>>> import pandas as pd
>>> from nemo_curator.tasks import DocumentBatch
>>> stage = threshold_filter("bertscore:minilm", "text", "translation_back", min_score=0.9, num_layers=2)
>>> stage.setup()
>>> batch = DocumentBatch(dataset_name="demo", data=pd.DataFrame(
...     {"text": ["a cat sat", "a cat sat"], "translation_back": ["a cat sat", "the stock market fell"]}))
>>> stage.process(batch).to_pandas()["translation_back"].tolist()
['a cat sat']
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Dict, Optional, Tuple, Union

from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.integrations.columns import ColumnScorer, partition_scorer

__all__ = ["score_stage", "stage_classes", "threshold_filter"]

_PURPOSE = "nlgscore.integrations.curator"


@functools.lru_cache(maxsize=None)
def stage_classes() -> Tuple[type, type]:
    """The stage classes, ``(ScoreStage, ThresholdFilter)``, subclasses of NeMo Curator's
    ``ProcessingStage`` made once per process (they are reachable as this module's attributes
    ``ScoreStage`` and ``ThresholdFilter``, so that a pickled stage finds its class in a worker).

    Returns:
        The two classes.

    Raises:
        MissingExtraError: NeMo Curator is not installed (``pip install 'nlgscore[curator]'``).

    Example:
        >>> score_class, filter_class = stage_classes()
        >>> issubclass(filter_class, score_class), score_class.__name__
        (True, 'ScoreStage')
    """
    base = require("nemo_curator.stages.base", "curator", _PURPOSE)
    tasks = require("nemo_curator.tasks", "curator", _PURPOSE)
    resources_module = require("nemo_curator.stages.resources", "curator", _PURPOSE)
    document_batch = tasks.DocumentBatch

    class ScoreStage(base.ProcessingStage[document_batch, document_batch]):  # type: ignore[name-defined]
        """Adds the score columns to each ``DocumentBatch``; see :func:`score_stage`."""

        name = "nlgscore_score"
        resources = resources_module.Resources(cpus=1.0)
        batch_size = 1

        def __init__(self, columns: ColumnScorer, resources: Any = None, name: Optional[str] = None) -> None:
            self.columns = columns
            self.output_names = columns.output_names()
            if resources is not None:
                self.resources = resources
            if name is not None:
                self.name = name

        def inputs(self) -> Tuple[list, list]:
            return ["data"], self.columns.input_columns()

        def outputs(self) -> Tuple[list, list]:
            return ["data"], self.columns.input_columns() + self.output_names

        def ray_stage_spec(self) -> Dict[str, Any]:
            return {**super().ray_stage_spec(), "is_actor_stage": True}  # the model lives on an actor

        def setup(self, worker_metadata: Any = None) -> None:
            self.columns.scorer  # noqa: B018 -- build the model once per worker, before its first batch

        def scored(self, batch: Any) -> Any:
            return self.columns.score_frame(batch.to_pandas())

        def process(self, batch: Any) -> Any:
            # a new task of the same fields (its metadata and timings kept), the scored rows as its data
            return dataclasses.replace(batch, data=self.scored(batch))

    class ThresholdFilter(ScoreStage):
        """Keeps the rows of each ``DocumentBatch`` whose score is in range; see :func:`threshold_filter`."""

        name = "nlgscore_threshold_filter"

        def __init__(
            self,
            columns: ColumnScorer,
            score: str,
            min_score: Optional[float],
            max_score: Optional[float],
            keep_scores: bool,
            resources: Any = None,
            name: Optional[str] = None,
        ) -> None:
            super().__init__(columns, resources, name)
            self.score = columns.column_name(score)
            if self.score not in self.output_names:
                raise ArgumentError(
                    f"score={score!r} is not a score of {columns.scorer.name} "
                    f"(its scores: {', '.join(self.output_names)})"
                )
            self.min_score, self.max_score, self.keep_scores = min_score, max_score, keep_scores

        def outputs(self) -> Tuple[list, list]:
            return ["data"], self.columns.input_columns() + (self.output_names if self.keep_scores else [])

        def process(self, batch: Any) -> Any:
            frame = self.scored(batch)
            keep = frame[self.score].notna()
            if self.min_score is not None:
                keep &= frame[self.score] >= self.min_score
            if self.max_score is not None:
                keep &= frame[self.score] <= self.max_score
            frame = frame[keep]
            if not self.keep_scores:
                frame = frame.drop(columns=self.output_names)
            return dataclasses.replace(batch, data=frame)

    for cls in (ScoreStage, ThresholdFilter):
        cls.__module__, cls.__qualname__ = __name__, cls.__name__  # pickled by reference: __getattr__ below
    return ScoreStage, ThresholdFilter


def __getattr__(name: str) -> Any:
    if name in ("ScoreStage", "ThresholdFilter"):
        return stage_classes()[0 if name == "ScoreStage" else 1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _resources(cpus: float, gpus: float) -> Any:
    resources = require("nemo_curator.stages.resources", "curator", _PURPOSE)
    return resources.Resources(cpus=cpus, gpus=gpus)


def score_stage(
    metric: Union[str, ScorerLike] = "bertscore:minilm",
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    *,
    cpus: float = 1.0,
    gpus: float = 0.0,
    doc_id_column: Optional[str] = None,
    context: int = 0,
    **options: Any,
) -> Any:
    """A NeMo Curator stage adding the score columns to every ``DocumentBatch``.

    Args:
        metric: a spec for :func:`nlgscore.load` with ``options`` for it, or a ready scorer
            (pickled whole into each worker: prefer a spec).
        prediction_column: the column of predictions (translations, generations).
        reference_column: the column of references (a str or a list of str per row); None for a
            source-only metric (``prism:src``).
        source_column: the column of sources, or None.
        prefix: the output columns' prefix; None: the metric's name; ``""``: bare names.
        cpus: CPUs per worker (the stage's ``Resources``).
        gpus: GPUs per worker; pass ``device="cuda"`` in ``options`` to score on it.
        doc_id_column: the column of document ids, for ``context``.
        context: previous sentences each row is read after; each document must lie wholly in
            one batch, its lines in order.
        **options: the scorer's options (``num_layers``, ``batch_size``, ``idf_sents`` ...).

    Returns:
        A ``ProcessingStage[DocumentBatch, DocumentBatch]`` (``ScoreStage``), for
        ``Pipeline(stages=[..., stage, ...])``; ``stage.with_(...)`` works as for Curator's own.

    Raises:
        ArgumentError, ArgumentTypeError: as :class:`~nlgscore.integrations.columns.ColumnScorer`.
        MissingExtraError: NeMo Curator is not installed.

    Example:
        >>> stage = score_stage("bertscore:minilm", "text", "reference", num_layers=2)
        >>> stage.inputs(), stage.outputs()[1]
        ((['data'], ['text', 'reference']), ['text', 'reference', 'bertscore_precision', 'bertscore_recall', 'bertscore_f1'])
    """
    score_class, _ = stage_classes()
    columns = partition_scorer(
        "score_stage",
        metric,
        (prediction_column, reference_column, source_column),
        prefix,
        options,
        doc_id_column,
        context,
    )
    return score_class(columns, _resources(cpus, gpus))


def threshold_filter(
    metric: Union[str, ScorerLike] = "bertscore:minilm",
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    *,
    score: str = "f1",
    min_score: Optional[float] = None,
    max_score: Optional[float] = None,
    keep_scores: bool = True,
    prefix: Optional[str] = None,
    cpus: float = 1.0,
    gpus: float = 0.0,
    **options: Any,
) -> Any:
    """A NeMo Curator filter stage keeping the rows whose ``score`` lies in ``[min_score, max_score]``.

    Args:
        metric: as :func:`score_stage`.
        prediction_column: as :func:`score_stage`.
        reference_column: as :func:`score_stage`.
        source_column: as :func:`score_stage`.
        score: the result column to compare (``"f1"`` for BERTScore, ``"segment"`` for Prism).
        min_score: the lowest score kept (inclusive); None: no lower bound.
        max_score: the highest score kept (inclusive); None: no upper bound.
        keep_scores: keep the score columns on the rows kept (False: drop them).
        prefix: as :func:`score_stage`.
        cpus: as :func:`score_stage`.
        gpus: as :func:`score_stage`.
        **options: the scorer's options.

    Returns:
        A ``ProcessingStage[DocumentBatch, DocumentBatch]`` (``ThresholdFilter``).

    Raises:
        ArgumentError: neither bound; ``min_score`` above ``max_score``; ``score`` not a column
            of the metric's result; as :func:`score_stage`.
        ArgumentTypeError: a bound that is not a number.
        MissingExtraError: NeMo Curator is not installed.

    Example:
        >>> threshold_filter("bertscore:minilm", num_layers=2, min_score=0.5).score
        'bertscore_f1'
    """
    for arg, bound in (("min_score", min_score), ("max_score", max_score)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))):
            raise ArgumentTypeError(f"{arg} must be a number (or None), got {type(bound).__name__}: {bound!r}")
    if min_score is None and max_score is None:
        raise ArgumentError("threshold_filter needs min_score=, max_score= or both (the scores it keeps)")
    if min_score is not None and max_score is not None and min_score > max_score:
        raise ArgumentError(f"min_score={min_score} is above max_score={max_score}: no row would be kept")
    _, filter_class = stage_classes()
    columns = partition_scorer(
        "threshold_filter", metric, (prediction_column, reference_column, source_column), prefix, options
    )
    return filter_class(columns, score, min_score, max_score, keep_scores, _resources(cpus, gpus))
