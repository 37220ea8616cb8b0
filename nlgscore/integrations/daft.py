"""Scores as a struct column of a Daft DataFrame: ``df.with_column("s", score_udf(...)())``.

:func:`score_udf` is a Daft class UDF (``@daft.cls`` with a ``@daft.method.batch`` method): Daft
keeps a pool of instances (``max_concurrency`` of them, in worker processes with
``use_process=True``, each asking for ``gpus`` GPUs and ``cpus`` CPUs), each builds the scorer
once and scores batches of ``batch_size`` rows. It returns one struct column whose fields are
:func:`nlgscore.integrations.datasets.map_function`'s column names (``bertscore_precision``, ...);
:func:`with_scores` adds them as columns. The same calls run on Daft's native runner and on Ray
(``daft.set_runner_ray()``).

Daft cuts a DataFrame into partitions and batches of its own choosing; a score does not depend on
them, so any partitioning gives the bits of one offline ``compute``. A batch may cut a document,
so document context (``context=``) is refused here: score documents with ``nlgscore.stream``, or
with Spark, Dask or NeMo Curator, which hand over whole partitions.

Running it needs Daft (``pip install 'nlgscore[daft]'``); making it does not:

>>> fn = score_udf("bertscore:minilm", num_layers=2, max_concurrency=2)
>>> fn.input_columns, fn.output_names
(['prediction', 'reference'], ['bertscore_precision', 'bertscore_recall', 'bertscore_f1'])
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from nlgscore.backend.batching import check_positive
from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError
from nlgscore.integrations.columns import ColumnScorer

__all__ = ["ScoreUDF", "score_udf", "with_scores"]

_PURPOSE = "nlgscore.integrations.daft"


def _daft_class(daft: Any, names: List[str], resources: Dict[str, Any], batch_size: int) -> Any:
    """The ``@daft.cls`` class: each instance builds the scorer once and scores whole batches."""
    import pyarrow as pa

    struct = daft.DataType.struct({name: daft.DataType.float64() for name in names})

    @daft.cls(**resources)
    class NlgscoreScorer:
        def __init__(self, columns: ColumnScorer, inputs: List[str]) -> None:
            self.columns, self.inputs = columns, inputs
            columns.scorer  # noqa: B018 -- build the model now, once per instance, not on its first batch

        @daft.method.batch(return_dtype=struct, batch_size=batch_size)
        def score(self, *series: Any) -> Any:
            scores = self.columns.score(dict(zip(self.inputs, series, strict=True)))
            return pa.StructArray.from_arrays([pa.array(scores[name], pa.float64()) for name in names], names=names)

    return NlgscoreScorer


class ScoreUDF:
    """A Daft class UDF returning the score columns as one struct; see :func:`score_udf`.

    Args:
        columns: the shared column logic (:class:`~nlgscore.integrations.columns.ColumnScorer`).
        batch_size: rows per call of the scorer.
        resources: ``daft.cls``'s ``cpus``, ``gpus``, ``max_concurrency`` and ``use_process``.

    Attributes:
        columns: the shared column logic.
        input_columns: the columns it reads, in the order a call takes them.
        output_names: the struct's fields.
    """

    def __init__(self, columns: ColumnScorer, batch_size: int, resources: Dict[str, Any]) -> None:
        self.columns = columns
        self.batch_size = batch_size
        self.resources = resources
        self.input_columns = columns.input_columns()
        self.output_names = columns.output_names()
        self._instance: Any = None

    def __call__(self, *columns: Any) -> Any:
        """The struct column (a Daft ``Expression``) for these input columns.

        Args:
            *columns: names or ``Expression`` objects, in the order of :attr:`input_columns`;
                none: the columns the UDF was made for.

        Returns:
            A Daft ``Expression`` of the score struct.

        Raises:
            ArgumentTypeError: another number of columns than :attr:`input_columns`.
        """
        daft = require("daft", "daft", _PURPOSE)
        named = self.columns.call_columns(columns)
        if self._instance is None:  # Daft builds instances lazily, where the query runs
            self._instance = _daft_class(daft, self.output_names, self.resources, self.batch_size)(
                self.columns, self.input_columns
            )
        return self._instance.score(*(daft.col(c) if isinstance(c, str) else c for c in named))

    def __repr__(self) -> str:
        return f"score_udf({self.columns.metric!r}, prefix={self.columns.output_prefix!r})"


def score_udf(
    metric: Union[str, ScorerLike] = "bertscore:minilm",
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    *,
    batch_size: int = 256,
    max_concurrency: Optional[int] = None,
    gpus: float = 0,
    cpus: Optional[float] = None,
    use_process: Optional[bool] = None,
    **options: Any,
) -> ScoreUDF:
    """A Daft class UDF scoring a DataFrame's rows, returning the score columns as a struct.

    Args:
        metric: a spec for :func:`nlgscore.load` with ``options`` for it, or a ready scorer
            (pickled whole into each instance: prefer a spec).
        prediction_column: the column of predictions.
        reference_column: the column of references (``string``, or ``list[string]`` for several
            per row); None for a source-only metric (``prism:src``).
        source_column: the column of sources, or None.
        prefix: the struct fields' prefix; None: the metric's name; ``""``: bare names.
        batch_size: the most rows Daft hands one call (each call is one ``compute``).
        max_concurrency: how many instances (scorers) Daft runs at once; None: Daft's choice.
        gpus: GPUs per instance (a fraction up to 1 shares one); pass ``device="cuda"`` in
            ``options`` to score on it.
        cpus: CPUs per instance; None: Daft's choice.
        use_process: run each instance in its own process (True), in this one (False), or let
            Daft choose (None).
        **options: the scorer's options (``num_layers``, ``batch_size``, ``idf_sents`` ...).

    Returns:
        A :class:`ScoreUDF`: call it (with no arguments, or the input columns in the order of its
        ``input_columns``) for the struct column.

    Raises:
        ArgumentError: as :class:`~nlgscore.integrations.columns.ColumnScorer` (``idf=True``
            without ``idf_sents``; ``context``, which a batch may cut); a bad ``batch_size``,
            ``max_concurrency`` or ``gpus``.
        ArgumentTypeError: an option the metric does not take.

    Example:
        >>> score_udf("bertscore:minilm", prefix="bs", num_layers=2).output_names
        ['bs_precision', 'bs_recall', 'bs_f1']
    """
    check_positive("batch_size", batch_size, allow_none=False)
    check_positive("max_concurrency", max_concurrency, allow_none=True)
    if isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or gpus < 0 or (gpus > 1 and gpus != int(gpus)):
        raise ArgumentError(f"gpus must be a number >= 0, a whole number above 1 (GPUs per instance), got {gpus!r}")
    columns = ColumnScorer(
        metric, prediction_column, reference_column, source_column, prefix, options, door="daft score_udf"
    )
    resources = {"gpus": gpus, "cpus": cpus, "max_concurrency": max_concurrency, "use_process": use_process}
    return ScoreUDF(columns, batch_size, resources)


def with_scores(df: Any, metric: Union[str, ScorerLike] = "bertscore:minilm", **kwargs: Any) -> Any:
    """``df`` with one column per score added (``bertscore_precision`` ...), the rows as they were.

    Args:
        df: a Daft DataFrame.
        metric: as :func:`score_udf`.
        **kwargs: the other arguments of :func:`score_udf`.

    Returns:
        The lazy DataFrame (``.collect()``, ``.write_parquet(...)``); a row the metric refuses
        fails the query with the error an offline call raises (Daft's error carries its class
        and message).

    Raises:
        KeyError: a column the metric reads is not in ``df`` (naming the argument).

    Example:
        >>> import daft
        >>> df = daft.from_pydict({"prediction": ["a cat", "a dog"], "reference": ["the cat", "a dog"]})
        >>> out = with_scores(df, num_layers=2, use_process=False).to_pydict()
        >>> [round(f, 3) for f in out["bertscore_f1"]][1]
        1.0
    """
    daft = require("daft", "daft", _PURPOSE)
    fn = score_udf(metric, **kwargs)
    fn.columns.require(df.column_names)
    hidden = "__nlgscore_scores"
    return df.with_column(hidden, fn()).select(
        *df.column_names, *[daft.col(hidden)[name].alias(name) for name in fn.output_names]
    )
