"""Scores as a struct column of a Spark DataFrame: ``df.withColumn("s", score_udf(...)())``.

:func:`score_udf` is Spark's pattern for model inference (``pyspark.ml.functions.predict_batch_udf``:
the model is built once per Python worker, batches arrive as Arrow), written as an iterator pandas
UDF so that it also reads what ``predict_batch_udf`` cannot: a column of several references per
row (``array<string>``, ragged) and whole partitions for document context. It returns one struct
column whose fields are :func:`nlgscore.integrations.datasets.map_function`'s column names
(``bertscore_precision``, ``bertscore_recall``, ``bertscore_f1``); ``select("*", "s.*")`` gives
them as columns, and :func:`with_scores` does both steps.

Spark splits a DataFrame into partitions of its own choosing and each partition into Arrow
batches; a score does not depend on either, so any partitioning gives the bits of one offline
``compute``. Each Python worker builds the scorer on its first batch and keeps it for the next
tasks (Spark reuses its Python workers); Spark gives each worker ``OMP_NUM_THREADS`` =
``spark.task.cpus`` (1 by default), so ``local[N]`` runs N single-threaded scorers.

Running it needs a Spark session (``pip install 'nlgscore[spark]'``); making it does not:

>>> fn = score_udf("bertscore:minilm", num_layers=2)
>>> fn.input_columns, fn.output_names
(['prediction', 'reference'], ['bertscore_precision', 'bertscore_recall', 'bertscore_f1'])
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple, Union

from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentTypeError
from nlgscore.integrations.columns import ColumnScorer, partition_scorer

__all__ = ["ScoreUDF", "score_udf", "with_scores"]


def _score_partition(columns: ColumnScorer, names: List[str], inputs: List[str]) -> Any:
    """The body of the pandas UDF: batches of input Series in, one DataFrame of scores out per batch."""
    import pandas as pd

    def score(batches: Iterator[Tuple[pd.Series, ...]]) -> Iterator[pd.DataFrame]:
        if not columns.context:
            for series in batches:
                scores = columns.score(dict(zip(inputs, series, strict=True)))
                yield pd.DataFrame({name: scores[name] for name in names})
            return
        # Document context: the whole partition in one call, so that a document split across
        # Arrow batches keeps its previous sentences; Spark takes the rows back batch by batch.
        held = list(batches)
        if not held:
            return
        whole = [pd.concat([series[i] for series in held], ignore_index=True) for i in range(len(inputs))]
        scores = pd.DataFrame(columns.score(dict(zip(inputs, whole, strict=True))))[names]
        start = 0
        for series in held:
            yield scores.iloc[start : start + len(series[0])].reset_index(drop=True)
            start += len(series[0])

    # Spark tells the UDF's kind by its type hints, evaluated, not the strings of postponed annotations.
    score.__annotations__ = {"batches": Iterator[Tuple[pd.Series, ...]], "return": Iterator[pd.DataFrame]}
    return score


# Spark types a score UDF's inputs may have: text, or (references only) an array of text.
_TEXT_TYPES = ("string", "varchar", "char")


class ScoreUDF:
    """A Spark pandas UDF returning the score columns as one struct; see :func:`score_udf`.

    Args:
        columns: the shared column logic (:class:`~nlgscore.integrations.columns.ColumnScorer`).

    Attributes:
        columns: the shared column logic.
        input_columns: the columns it reads, in the order a call takes them.
        output_names: the struct's fields.
    """

    def __init__(self, columns: ColumnScorer) -> None:
        self.columns = columns
        self.input_columns = columns.input_columns()
        self.output_names = columns.output_names()
        self._udf: Any = None

    @property
    def return_type(self) -> Any:
        """The struct's Spark type: one nullable ``double`` field per score."""
        types = require("pyspark.sql.types", "spark", "nlgscore.integrations.spark")
        return types.StructType([types.StructField(name, types.DoubleType(), True) for name in self.output_names])

    @property
    def udf(self) -> Any:
        """The pandas UDF itself (``pyspark.sql.functions.pandas_udf`` of iterator type), made once."""
        if self._udf is None:
            functions = require("pyspark.sql.functions", "spark", "nlgscore.integrations.spark")
            body = _score_partition(self.columns, self.output_names, self.input_columns)
            self._udf = functions.pandas_udf(body, returnType=self.return_type)
        return self._udf

    def check_schema(self, df: Any) -> None:
        """Refuse, before anything runs, a DataFrame whose columns the metric cannot read.

        Args:
            df: a Spark DataFrame.

        Raises:
            KeyError: a column the metric reads is not in ``df`` (naming the argument).
            ArgumentTypeError: a column of another type than ``string`` (references: ``string``
                or ``array<string>``), naming the argument and the type.
        """
        self.columns.require(df.columns)
        types = {field.name: field.dataType.simpleString() for field in df.schema.fields}
        named = {
            "prediction_column": self.columns.prediction_column,
            "reference_column": self.columns.reference_column if self.columns.reads_references() else None,
            "source_column": self.columns.source_column,
        }
        for arg, column in named.items():
            if column is None:
                continue
            kind = types[column]
            base = kind[len("array<") : -1] if arg == "reference_column" and kind.startswith("array<") else kind
            if base.split("(")[0] not in _TEXT_TYPES:
                want = "string or array<string>" if arg == "reference_column" else "string"
                raise ArgumentTypeError(f"{arg}={column!r} is a {kind} column; the metric reads {want}")

    def __call__(self, *columns: Any) -> Any:
        """The struct column for these input columns.

        Args:
            *columns: names or ``Column`` objects, in the order of :attr:`input_columns`; none:
                the columns the UDF was made for.

        Returns:
            A Spark ``Column`` of the score struct.

        Raises:
            ArgumentTypeError: another number of columns than :attr:`input_columns`.
        """
        return self.udf(*self.columns.call_columns(columns))

    def __repr__(self) -> str:
        return f"score_udf({self.columns.metric!r}, prefix={self.columns.output_prefix!r})"


def score_udf(
    metric: Union[str, ScorerLike] = "bertscore:minilm",
    prediction_column: str = "prediction",
    reference_column: Optional[str] = "reference",
    source_column: Optional[str] = None,
    prefix: Optional[str] = None,
    *,
    doc_id_column: Optional[str] = None,
    context: int = 0,
    **options: Any,
) -> ScoreUDF:
    """A pandas UDF scoring a Spark DataFrame's rows, returning the score columns as a struct.

    The driver builds the scorer once to learn the output columns (an empty call); each Python
    worker builds its own on its first batch and keeps it.

    Args:
        metric: a spec for :func:`nlgscore.load` with ``options`` for it, or a ready scorer
            (pickled whole into each worker: prefer a spec).
        prediction_column: the column of predictions.
        reference_column: the column of references: ``string``, or ``array<string>`` for several
            per row; None for a source-only metric (``prism:src``).
        source_column: the column of sources, or None.
        prefix: the struct fields' prefix; None: the metric's name; ``""``: bare names.
        doc_id_column: the column of document ids, for ``context``.
        context: previous sentences each row is read after (document-level metrics). Each
            partition is scored in one call, so each document must lie wholly in one partition, its
            lines in order: ``df.repartition("doc").sortWithinPartitions("doc", "line")``.
        **options: the scorer's options (``num_layers``, ``batch_size``, ``idf_sents`` ...).

    Returns:
        A :class:`ScoreUDF`: call it (with no arguments, or the input columns in the order of its
        ``input_columns``) for the struct column.

    Raises:
        ArgumentError: as :class:`~nlgscore.integrations.columns.ColumnScorer` (``idf=True``
            without ``idf_sents``, neither reference nor source column, ``context`` without
            ``doc_id_column``).
        ArgumentTypeError: an option the metric does not take.

    Example:
        >>> fn = score_udf("bertscore:minilm", prefix="bs", num_layers=2)
        >>> fn.output_names
        ['bs_precision', 'bs_recall', 'bs_f1']
    """
    columns = partition_scorer(
        "score_udf",
        metric,
        (prediction_column, reference_column, source_column),
        prefix,
        options,
        doc_id_column,
        context,
    )
    return ScoreUDF(columns)


def with_scores(df: Any, metric: Union[str, ScorerLike] = "bertscore:minilm", **kwargs: Any) -> Any:
    """``df`` with one column per score added (``bertscore_precision`` ...), the rows as they were.

    Args:
        df: a Spark DataFrame.
        metric: as :func:`score_udf`.
        **kwargs: the other arguments of :func:`score_udf`.

    Returns:
        The lazy DataFrame (``.write.parquet(...)``, ``.collect()``); a row the metric refuses
        fails the job with the error an offline call raises (Spark's ``PythonException`` carries
        its class and message), and a failed job leaves no ``_SUCCESS`` behind.

    Raises:
        KeyError: a column the metric reads is not in ``df`` (naming the argument).
        ArgumentTypeError: a column of another type than text (:meth:`ScoreUDF.check_schema`).

    Example:
        A Spark session takes seconds to start; the engines guide runs the whole recipe.

        >>> from pyspark.sql import SparkSession  # doctest: +SKIP
        >>> spark = SparkSession.builder.master("local[2]").getOrCreate()  # doctest: +SKIP
        >>> df = spark.createDataFrame([("a cat", "the cat")], ["prediction", "reference"])  # doctest: +SKIP
        >>> with_scores(df, "bertscore:minilm").columns  # doctest: +SKIP
        ['prediction', 'reference', 'bertscore_precision', 'bertscore_recall', 'bertscore_f1']
    """
    functions = require("pyspark.sql.functions", "spark", "nlgscore.integrations.spark")
    fn = score_udf(metric, **kwargs)
    fn.check_schema(df)
    hidden = "__nlgscore_scores"
    return df.select("*", fn().alias(hidden)).select(
        *[df[column] for column in df.columns],
        *[functions.col(hidden)[name].alias(name) for name in fn.output_names],
    )
