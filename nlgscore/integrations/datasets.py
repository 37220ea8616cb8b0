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
from typing import Any, Dict, List, Mapping, Optional, Union

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError

# metric_prefix lived here first: the adapters that name columns by the metric import it from here
from nlgscore.integrations.columns import ColumnScorer, metric_prefix  # noqa: F401


class ScoreColumns(ColumnScorer):
    """The batched map function `map_function` returns.

    Args:
        metric: a spec for ``nlgscore.registry.build``, or a ready scorer.
        prediction_column: the column holding the predictions.
        reference_column: the column holding the references (strings or lists of strings); None
            for a source-only metric.
        source_column: the column holding the sources, for a metric that needs them.
        prefix: the new columns' prefix (None: the metric's name; ``""``: bare names).
        options: the scorer's constructor options, with a spec.
    """

    def __init__(
        self,
        metric: Union[str, ScorerLike],
        prediction_column: str,
        reference_column: Optional[str],
        source_column: Optional[str],
        prefix: Optional[str],
        options: Dict[str, Any],
    ) -> None:
        super().__init__(metric, prediction_column, reference_column, source_column, prefix, options)
        self._origin_pid = os.getpid()

    def __call__(self, batch: Dict[str, List[Any]], rank: Optional[int] = None) -> Dict[str, List[float]]:
        """Score one batch; ``rank`` (``map(..., with_rank=True)``) picks a GPU per worker."""
        if rank is not None and isinstance(self.metric, str) and "device" not in self.options:
            device = _device_for_rank(rank)
            if device is not None:
                self.options["device"] = device
        if os.getpid() != self._origin_pid:
            _single_thread_worker()
        column = batch.get(self.prediction_column) if hasattr(batch, "get") else None
        if isinstance(column, str):
            # Without batched=True, datasets passes one row: its strings would be scored character by character.
            raise ArgumentTypeError(
                f"{self!r} got a single row (column {self.prediction_column!r} holds a string, not a list): "
                "use dataset.map(fn, batched=True)"
            )
        return self.score(batch)


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

    The function holds the spec, not the model: it pickles light, and each ``num_proc`` worker
    loads the model once, on its first batch. With ``with_rank=True`` on a GPU machine, worker *k*
    uses GPU ``k % n``.

    Args:
        metric: a spec for ``nlgscore.registry.build`` (``"bertscore:minilm"``, ``"prism:ref"``,
            ``"bartscore:bart-large-cnn"``), or a ready scorer (pickled whole into each worker, so
            prefer a spec with ``num_proc > 1``).
        prediction_column: the column holding the predictions.
        reference_column: the column holding the references: strings, or lists of strings
            (several references per row); None for a source-only metric (``prism:src``).
        source_column: the column holding the sources, for a metric that needs them.
        prefix: the new columns are ``<prefix>_<name>`` for every column of the result
            (``bertscore_precision``, ``bertscore_recall``, ``bertscore_f1``); None: the metric's
            name; ``""``: bare names.
        **options: the scorer's constructor options, with a spec (``num_layers=4``). ``idf=True``
            needs ``idf_sents`` (`idf_sentences` of the dataset): an idf from each map batch would
            change with the batch, so it is refused.

    Returns:
        The map function: called on a batch (a dict of column lists), it returns the new columns,
        one score per row in order.

    Raises:
        ArgumentError: a column name or option the metric refuses (``idf=True`` without
            ``idf_sents``), named.
        ArgumentTypeError: ``metric`` is neither a spec nor a scorer; at map time, a single row
            (a map without ``batched=True``).

    Example:
        >>> fn = map_function("bertscore:minilm", num_layers=4)
        >>> fn({"prediction": ["it is freezing today"], "reference": ["the weather is cold today"]}).keys()
        dict_keys(['bertscore_precision', 'bertscore_recall', 'bertscore_f1'])
    """
    return ScoreColumns(metric, prediction_column, reference_column, source_column, prefix, options)
