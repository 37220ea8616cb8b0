"""Scores as new columns of a Dask DataFrame: ``ddf.map_partitions(fn, meta=fn.meta(ddf))``.

:func:`score_partitions` returns a light, picklable function of one pandas partition: each Dask
worker process builds the scorer on its first partition and keeps it for the next ones (the
scorer cache of :func:`nlgscore.registry.cached`), and ``meta`` is the partition with the score
columns (``float64``) added, which Dask needs to plan without running it. :func:`with_scores` does
both steps. Output columns are named like :func:`nlgscore.integrations.datasets.map_function`'s
(``bertscore_precision``, ...); the input columns are kept, in order.

``map_partitions`` hands over whole partitions in row order, so document context (``context=``
with ``doc_id_column=``) holds for a document that lies wholly in one partition. A score does not
depend on the partitioning: any ``npartitions`` gives the bits of one offline ``compute``. Dask's
workers run with ``OMP_NUM_THREADS=1`` (its ``distributed.nanny.pre-spawn-environ``), so N worker
processes run N single-threaded scorers.

Several references per row are a column of lists. Dask turns a pandas column of Python objects
into text (``dataframe.convert-string``, on by default), which makes a list the string of its
repr; keep lists with ``dask.config.set({"dataframe.convert-string": False})`` or read them from
a ``list<string>`` Parquet column.

>>> import pandas as pd
>>> fn = score_partitions("bertscore:minilm", num_layers=2)
>>> part = pd.DataFrame({"prediction": ["it is cold"], "reference": ["it is freezing"]})
>>> list(fn(part).columns), fn.meta(part.iloc[:0]).dtypes.iloc[-1]
(['prediction', 'reference', 'bertscore_precision', 'bertscore_recall', 'bertscore_f1'], dtype('float64'))
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any, Optional, Union

from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.integrations.columns import ColumnScorer, partition_scorer

__all__ = ["ScorePartitions", "score_partitions", "to_parquet", "with_scores"]


class ScorePartitions:
    """The ``map_partitions`` function; see :func:`score_partitions`.

    Args:
        columns: the shared column logic (:class:`~nlgscore.integrations.columns.ColumnScorer`).

    Attributes:
        columns: the shared column logic.
    """

    def __init__(self, columns: ColumnScorer) -> None:
        self.columns = columns

    def meta(self, frame: Any) -> Any:
        """``meta=`` for ``map_partitions``: ``frame``'s empty schema with the score columns.

        Args:
            frame: a Dask DataFrame, or a pandas one with its columns.

        Returns:
            An empty pandas DataFrame of the output's columns and dtypes (``float64`` scores).

        Raises:
            KeyError: a column the metric reads is not in ``frame`` (naming the argument).
        """
        return self.columns.empty_frame(frame)

    def __call__(self, partition: Any) -> Any:
        """``partition`` (a pandas DataFrame) with its score columns added, rows as they were.

        Args:
            partition: one partition of the Dask DataFrame.

        Returns:
            A new pandas DataFrame.

        Raises:
            KeyError: a column the metric reads is not in the partition.
            ArgumentTypeError, ArgumentError: a bad row, with an offline call's message.
        """
        return self.columns.score_frame(partition)

    def __repr__(self) -> str:
        return f"score_partitions({self.columns.metric!r}, prefix={self.columns.output_prefix!r})"


def score_partitions(
    metric: Union[str, ScorerLike] = "bertscore:minilm",
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    *,
    doc_id_column: Optional[str] = None,
    context: int = 0,
    **options: Any,
) -> ScorePartitions:
    """A function for ``ddf.map_partitions(fn, meta=fn.meta(ddf))`` adding one column per score.

    Args:
        metric: a spec for :func:`nlgscore.load` with ``options`` for it, or a ready scorer
            (pickled whole into each worker: prefer a spec).
        prediction_column: the column of predictions.
        reference_column: the column of references (a str or a list of str per row); None for a
            source-only metric (``prism:src``).
        source_column: the column of sources, or None.
        prefix: the output columns' prefix; None: the metric's name; ``""``: bare names.
        doc_id_column: the column of document ids, for ``context``.
        context: previous sentences each row is read after; each document must lie wholly in one
            partition, its lines in order.
        **options: the scorer's options (``num_layers``, ``batch_size``, ``idf_sents`` ...).

    Returns:
        A :class:`ScorePartitions` (picklable; it holds the spec, not the model).

    Raises:
        ArgumentError: as :func:`~nlgscore.integrations.datasets.map_function`; ``context``
            without ``doc_id_column``.
        ArgumentTypeError: an option the metric does not take.

    Example:
        >>> import pandas as pd
        >>> fn = score_partitions("bertscore:minilm", prefix="bs", num_layers=2)
        >>> fn(pd.DataFrame({"prediction": ["a cat"], "reference": [["the cat", "a cat"]]}))["bs_f1"].round(3).tolist()
        [1.0]
    """
    return ScorePartitions(
        partition_scorer(
            "score_partitions",
            metric,
            (prediction_column, reference_column, source_column),
            prefix,
            options,
            doc_id_column,
            context,
        )
    )


def with_scores(ddf: Any, metric: Union[str, ScorerLike] = "bertscore:minilm", **kwargs: Any) -> Any:
    """``ddf.map_partitions(fn, meta=fn.meta(ddf))`` with ``fn = score_partitions(metric, **kwargs)``.

    Args:
        ddf: a Dask DataFrame.
        metric: as :func:`score_partitions`.
        **kwargs: the other arguments of :func:`score_partitions`.

    Returns:
        The lazy Dask DataFrame with the score columns (``.compute()``, ``.to_parquet(...)``).

    Raises:
        KeyError: a column the metric reads is not in ``ddf`` (naming the argument).

    Example:
        Without a cluster, Dask runs the partitions on threads of this process:

        >>> import dask.dataframe as dd, pandas as pd
        >>> frame = pd.DataFrame({"prediction": ["a cat", "a dog"], "reference": ["the cat", "a dog"]})
        >>> out = with_scores(dd.from_pandas(frame, npartitions=2), "bertscore:minilm", num_layers=2)
        >>> out.compute().columns.tolist()
        ['prediction', 'reference', 'bertscore_precision', 'bertscore_recall', 'bertscore_f1']
    """
    require("dask.dataframe", "dask", "nlgscore.integrations.dask")
    fn = score_partitions(metric, **kwargs)
    return ddf.map_partitions(fn, meta=fn.meta(ddf))


def to_parquet(ddf: Any, path: str, **kwargs: Any) -> str:
    """Write ``ddf`` to the local folder ``path`` only if every partition is written.

    Dask writes one file per partition as each finishes, so a partition that fails (a row the
    metric refuses) would leave the others' files in ``path``, which a reader takes for the whole
    table. Here they are written into a sibling folder, renamed to ``path`` once all are there, and
    removed if any fails.

    Args:
        ddf: a Dask DataFrame (the lazy output of :func:`with_scores`).
        path: the folder to write; it must not exist yet.
        **kwargs: ``ddf.to_parquet``'s options (``engine``, ``compression`` ...).

    Returns:
        ``path``.

    Raises:
        FileExistsError: ``path`` exists.
        Exception: whatever a partition raised (the scorer's error for a bad row); then nothing
            is left at ``path``.

    Example:
        >>> import dask.dataframe as dd, pandas as pd, tempfile
        >>> folder = os.path.join(tempfile.mkdtemp(), "scores")
        >>> frame = pd.DataFrame({"prediction": ["a cat", None], "reference": ["the cat", "a dog"]})
        >>> to_parquet(with_scores(dd.from_pandas(frame, npartitions=2), num_layers=2), folder)
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: predictions[0] must be a str, got NoneType: None (a batch of 1 row read from ...)
        >>> os.path.exists(folder)
        False
    """
    target = os.path.abspath(os.fspath(path))
    if os.path.exists(target):
        raise FileExistsError(f"path={path!r} exists; to_parquet writes a new folder")
    partial = f"{target}.partial-{uuid.uuid4().hex[:8]}"
    try:
        ddf.to_parquet(partial, **kwargs)
        os.replace(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return path
