"""Scores as new columns of a 🤗 ``datasets.Dataset``: ``dataset.map(map_function(...), batched=True)``.

The returned function is picklable and light (it holds the metric spec, not the model), so
``num_proc > 1`` works: each worker process loads the model once, on its first batch, and keeps
it for the following batches (and for other map calls with the same settings).

>>> fn = map_function("bertscore:minilm", num_layers=4)
>>> fn.output_prefix
'bertscore'
>>> fn({"prediction": ["it is freezing today"], "reference": ["the weather is cold today"]}).keys()
dict_keys(['bertscore_precision', 'bertscore_recall', 'bertscore_f1'])

BERTScore's idf is the test set's (Zhang et al., 2020: computed over the M references, "the same
for all systems evaluated on a specific test set"), never a map batch's: ``idf=True`` needs
``idf_sents``, every reference of the dataset, which :func:`idf_sentences` gathers once.

>>> idf_sentences({"reference": ["a cat", ["a dog", "the dog"]]})
['a cat', 'a dog', 'the dog']
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Union

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.registry import cached, check_options


def metric_prefix(metric: Union[str, ScorerLike]) -> str:
    """Default column prefix: the metric's name (``bertscore:minilm`` → ``bertscore``)."""
    if isinstance(metric, ScorerLike):
        return metric.name
    if isinstance(metric, str) and metric.startswith(("http://", "https://")):  # a running `nlgscore serve`: its metric
        return cached(metric).name
    from nlgscore.registry import parse_spec

    return parse_spec(metric)[0]  # an unknown metric name fails here, listing the known ones


class ScoreColumns:
    """The batched map function; see :func:`map_function`."""

    def __init__(
        self,
        metric: Union[str, ScorerLike],
        prediction_column: str,
        reference_column: Optional[str],
        source_column: Optional[str],
        prefix: Optional[str],
        options: Dict[str, Any],
    ) -> None:
        if not isinstance(metric, (str, ScorerLike)):
            raise ArgumentTypeError(
                f"metric must be a spec string such as 'bertscore:minilm' or a Scorer, got {type(metric).__name__}"
            )
        if isinstance(metric, ScorerLike) and options:
            raise ArgumentError(f"options {sorted(options)} only apply to a metric given as a spec string")
        if reference_column is None and source_column is None:
            raise ArgumentError("give reference_column, source_column or both")
        if isinstance(metric, str):  # an option the metric does not take fails here, not in a worker
            check_options(metric, **options)
        _refuse_batch_idf(metric, options)
        self.metric = metric
        self.prediction_column = prediction_column
        self.reference_column = reference_column
        self.source_column = source_column
        self.output_prefix = prefix if prefix is not None else metric_prefix(metric)
        self.options = dict(options)
        self._origin_pid = os.getpid()
        self._told_unread = False

    @property
    def scorer(self) -> ScorerLike:
        if isinstance(self.metric, ScorerLike):
            return self.metric
        return cached(self.metric, **self.options)

    def __call__(self, batch: Dict[str, List[Any]], rank: Optional[int] = None) -> Dict[str, List[float]]:
        """Score one batch; ``rank`` (``map(..., with_rank=True)``) picks a GPU per worker."""
        if rank is not None and isinstance(self.metric, str) and "device" not in self.options:
            device = _device_for_rank(rank)
            if device is not None:
                self.options["device"] = device
        if os.getpid() != self._origin_pid:
            _single_thread_worker()
        reference_column = self._reference_column(batch)
        named = (
            ("prediction_column", self.prediction_column),
            ("reference_column", reference_column),
            ("source_column", self.source_column),
        )
        missing = [f"{arg}={column!r}" for arg, column in named if column and column not in batch]
        if missing:
            raise KeyError(
                f"{', '.join(missing)}: no such column in the dataset (its columns: {', '.join(sorted(batch))}); "
                "name the dataset's columns with prediction_column=, reference_column= and source_column="
            )
        if isinstance(batch[self.prediction_column], str):
            # Without batched=True, datasets passes one row: its strings would be scored character by character.
            raise ArgumentTypeError(
                f"{self!r} got a single row (column {self.prediction_column!r} holds a string, not a list): "
                "use dataset.map(fn, batched=True)"
            )
        result = self.scorer.compute(
            list(batch[self.prediction_column]),
            references=list(batch[reference_column]) if reference_column else None,
            sources=list(batch[self.source_column]) if self.source_column else None,
        )
        sep = "_" if self.output_prefix else ""
        return {f"{self.output_prefix}{sep}{name}": values for name, values in result.columns().items()}

    def _reference_column(self, batch: Dict[str, List[Any]]) -> Optional[str]:
        """The reference column this metric reads: None for a source-only one (``prism:src``,
        ``bartscore:...:src``), saying so once when the dataset has the reference column named."""
        if self.reference_column is None or "references" in tuple(getattr(self.scorer, "needs", ("references",))):
            return self.reference_column
        if self.reference_column in batch and not self._told_unread:
            self._told_unread = True
            warnings.warn(
                f"{self.scorer.name} scores with sources only here: reference_column={self.reference_column!r} "
                "is not read (pass reference_column=None)",
                stacklevel=3,
            )
        return None

    def __repr__(self) -> str:
        return f"map_function({self.metric!r}, prefix={self.output_prefix!r})"


def _refuse_batch_idf(metric: Union[str, ScorerLike], options: Dict[str, Any]) -> None:
    """Refuse what a map batch would change: idf from each batch's references, document context
    cut at a batch's edge (both would move with ``batch_size``)."""
    per_call = (
        bool(getattr(metric, "call_dependent", False))
        if isinstance(metric, ScorerLike)
        else bool(options.get("idf")) and options.get("idf_sents") is None
    )
    if options.get("context"):
        raise ArgumentError(
            "map_function cannot read document context (context=): a map batch may cut a document, and a "
            "sentence would lose the sentences before it; score documents with "
            "scorer.compute(..., context=k, doc_ids=...) or nlgscore.stream"
        )
    if per_call:
        raise ArgumentError(
            "map_function with idf=True and no idf_sents would take idf from each map batch's references, "
            "which changes with batch_size and num_proc; BERTScore's idf is the test set's: pass "
            "idf_sents=nlgscore.integrations.datasets.idf_sentences(dataset, 'reference') (every reference, once)"
        )


def idf_sentences(dataset: Mapping[str, Any], column: str = "reference") -> List[str]:
    """Every reference of ``dataset[column]`` (strings, or lists of strings per row), in order:
    the ``idf_sents`` that make BERTScore's idf the whole test set's.

    Args:
        dataset: a ``datasets.Dataset`` or any mapping of column name to values.
        column: the column holding the references.

    Returns:
        The references, one string each, lists flattened.

    Raises:
        ArgumentError: ``column`` is not a column of ``dataset``, or holds something else than
            strings or lists of strings.

    Example:
        >>> idf_sentences({"ref": ["a", ["b", "c"]]}, "ref")
        ['a', 'b', 'c']
    """
    from nlgscore.core.inputs import check_texts

    names = list(getattr(dataset, "column_names", None) or dataset.keys())
    if column not in names:
        raise ArgumentError(f"column={column!r} is not a column of the dataset (its columns: {', '.join(names)})")
    out: List[str] = []
    for i, value in enumerate(dataset[column]):
        out.extend(check_texts(f"{column}[{i}]", [value] if isinstance(value, str) else value))
    return out


def _single_thread_worker() -> None:
    """Use one intra-op thread in a ``num_proc`` worker.

    A worker forked from a process whose torch already ran OpenMP-parallel ops hangs on its own
    first parallel op (the OpenMP pool does not survive fork); one thread per worker avoids the
    pool and is what the workers should use anyway, since they share the cores.
    """
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _device_for_rank(rank: int) -> Optional[str]:
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        return f"cuda:{rank % torch.cuda.device_count()}"
    return None


def map_function(
    metric: Union[str, ScorerLike],
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    **options: Any,
) -> ScoreColumns:
    """A function for ``Dataset.map(fn, batched=True)`` adding one column per score.

    ``metric`` is a spec for :func:`nlgscore.registry.build` (``"bertscore:minilm"``,
    ``"prism:ref"``, ``"bartscore:bart-large-cnn"``) with ``options`` for its constructor, or a
    ready :class:`~nlgscore.core.scorer_like.ScorerLike` (pickled whole into each worker, so prefer a spec with
    ``num_proc > 1``). Columns are ``<prefix>_<name>`` for every column of the result (e.g.
    ``bertscore_precision``, ``bertscore_recall``, ``bertscore_f1``); ``prefix`` defaults to the
    metric name, ``""`` gives bare names. The reference column may hold strings or lists of
    strings (multiple references); set ``reference_column=None`` for source-only metrics
    (``prism:src``). With ``with_rank=True`` on a GPU machine, worker *k* uses GPU ``k % n``.
    ``idf=True`` needs ``idf_sents`` (e.g. :func:`idf_sentences` of the dataset): idf from each
    map batch would change with the batch; it is refused.
    """
    return ScoreColumns(metric, prediction_column, reference_column, source_column, prefix, options)
