"""The column logic every table adapter shares: a batch's columns in, score columns out.

``datasets.map``, Ray Data, Spark, Daft, Dask and NeMo Curator each hand a scorer a batch of rows
as columns (lists, numpy or pandas or Arrow arrays). :class:`ColumnScorer` reads the columns it
is told (predictions, references, possibly several per row, sources, document ids), refuses a
bad row with the error an offline ``compute`` raises for it (same class, same message, with the
column and batch it came from added), scores the batch in one call and names the output columns
``<prefix>_<column>`` (``bertscore_f1``). Since a score does not depend on the batch it is scored
in, every engine's partitioning gives the bits of one offline call.

It holds the metric's spec and options, not the model (so it pickles small); the model is built
on first use in each process, once (:func:`nlgscore.registry.cached`).

>>> scorer = ColumnScorer("bertscore:minilm", options={"num_layers": 2})
>>> scorer.output_names()
['bertscore_precision', 'bertscore_recall', 'bertscore_f1']
>>> scorer.score({"prediction": ["it is cold"], "reference": [None]})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nlgscore.errors.ArgumentTypeError: references[0] must be a str or a list of str, got NoneType: None (a batch of 1 row read from ...)
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from nlgscore.core.scorer_like import ScorerLike
from nlgscore.errors import ArgumentError, ArgumentTypeError, NlgscoreError
from nlgscore.registry import cached, check_options

__all__ = ["ColumnScorer", "Inputs", "metric_prefix", "partition_scorer", "plain_column"]


def metric_prefix(metric: Union[str, ScorerLike]) -> str:
    """Default column prefix: the metric's name (``bertscore:minilm`` → ``bertscore``).

    Args:
        metric: a spec string, a server URL or a ready scorer.

    Returns:
        The metric's name.

    Raises:
        ArgumentError: an unknown metric name (the message lists the known ones).

    Example:
        >>> metric_prefix("prism:src:some/folder:en")
        'prism'
    """
    if isinstance(metric, ScorerLike):
        return metric.name
    if isinstance(metric, str) and metric.startswith(("http://", "https://")):  # a running `nlgscore serve`: its metric
        return cached(metric).name
    from nlgscore.registry import parse_spec

    return parse_spec(metric)[0]  # an unknown metric name fails here, listing the known ones


def _plain(value: Any) -> Any:
    """One cell as plain Python: numpy/pandas/Arrow scalars as their values, arrays as lists, and
    every engine's spelling of a missing value (None, NaN, ``pd.NA``) as None, so that a null row
    gets the error an offline call gives ``None``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values (not imported for this)
        return None
    if hasattr(value, "as_py"):  # a pyarrow scalar
        return _plain(value.as_py())
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):  # numpy scalar or array, pandas array
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def plain_column(values: Any) -> List[Any]:
    """A column of any engine (a list, a numpy/pandas/Arrow array, a ``daft.Series``) as a list of
    plain Python values, nulls as None.

    Args:
        values: the column.

    Returns:
        One plain value per row.

    Example:
        >>> import numpy as np
        >>> plain_column(np.array(["a", None, np.array(["b", "c"], dtype=object)], dtype=object))
        ['a', None, ['b', 'c']]
        >>> plain_column([1.0, float("nan")])
        [1.0, None]
    """
    if hasattr(values, "to_pylist"):  # pyarrow arrays and daft Series
        values = values.to_pylist()
    elif hasattr(values, "to_numpy") and not hasattr(values, "tolist"):
        values = values.to_numpy()
    if hasattr(values, "tolist") and getattr(values, "dtype", None) is not None and values.dtype.kind in "US":
        return values.tolist()  # a numpy array of fixed-width strings: already str
    out = list(values)
    if set(map(type, out)) <= {str}:  # the common all-text column: no call per cell
        return out
    return [_plain(v) for v in out]


def partition_scorer(
    door: str,
    metric: Union[str, ScorerLike],
    columns: Tuple[str, Optional[str], Optional[str]],
    prefix: Optional[str],
    options: Mapping[str, Any],
    doc_id_column: Optional[str] = None,
    context: int = 0,
) -> "ColumnScorer":
    """The :class:`ColumnScorer` of an adapter that scores a whole partition in row order (Spark,
    Dask, NeMo Curator), so that documents wholly inside a partition keep their context.

    Args:
        door: the adapter's name, as its refusals say it.
        metric: as :class:`ColumnScorer`.
        columns: the prediction, reference and source columns (the last two may be None).
        prefix: as :class:`ColumnScorer`.
        options: as :class:`ColumnScorer`.
        doc_id_column: as :class:`ColumnScorer`.
        context: as :class:`ColumnScorer`.

    Returns:
        The column logic.

    Raises:
        ArgumentError, ArgumentTypeError: as :class:`ColumnScorer`.

    Example:
        >>> partition_scorer("score_partitions", "bertscore:minilm", ("text", "ref", None), "bs", {}).input_columns()
        ['text', 'ref']
    """
    prediction_column, reference_column, source_column = columns
    return ColumnScorer(
        metric,
        prediction_column,
        reference_column,
        source_column,
        prefix,
        options,
        doc_id_column=doc_id_column,
        context=context,
        door=door,
        ordered=True,
    )


class Inputs(NamedTuple):
    """What one batch gives a scorer, checked as an offline call checks them.

    Attributes:
        predictions: one text per row.
        references: one reference (or a list of them) per row; None for a source-only metric.
        sources: one source per row; None without a source column.
        doc_ids: one document id per row; None without document context.
    """

    predictions: List[str]
    references: Optional[List[Any]]
    sources: Optional[List[str]]
    doc_ids: Optional[List[Any]]


class ColumnScorer:
    """Scores a batch of rows given as columns, for every table adapter.

    Args:
        metric: a spec (``"bertscore:minilm"``, ``"prism:src:FOLDER:en"``) built once per process
            with ``options``, a server URL, or a ready scorer (pickled whole into each worker).
        prediction_column: the column of predictions.
        reference_column: the column of references (a str or a list of str per row); None for a
            source-only metric.
        source_column: the column of sources, or None.
        prefix: the output columns' prefix (``<prefix>_<name>``); None: the metric's name; ``""``:
            bare names.
        options: the scorer's options (``num_layers``, ``batch_size``, ``idf_sents`` ...).
        doc_id_column: the column of document ids, for ``context``.
        context: how many previous sentences of its document each row is read after (0: none).
        door: the adapter's name, as its refusals say it.
        ordered: whether the adapter scores a whole partition in row order (then documents wholly
            inside a partition keep their context); otherwise ``context`` is refused.

    Raises:
        ArgumentTypeError: ``metric`` is neither a spec nor a scorer; an option the metric does
            not take.
        ArgumentError: neither ``reference_column`` nor ``source_column``; options with a ready
            scorer; ``idf=True`` without ``idf_sents``; ``context`` where the door cannot keep
            documents whole, or without ``doc_id_column``.

    Example:
        >>> scores = ColumnScorer("bertscore:minilm", prefix="bs", options={"num_layers": 2}).score(
        ...     {"prediction": ["a cat", "a dog"], "reference": [["the cat", "a cat"], "a dog"]})
        >>> sorted(scores), [round(f, 3) for f in scores["bs_f1"]]
        (['bs_f1', 'bs_precision', 'bs_recall'], [1.0, 1.0])
    """

    def __init__(
        self,
        metric: Union[str, ScorerLike],
        prediction_column: str = "prediction",
        reference_column: Optional[str] = "reference",
        source_column: Optional[str] = None,
        prefix: Optional[str] = None,
        options: Optional[Mapping[str, Any]] = None,
        *,
        doc_id_column: Optional[str] = None,
        context: int = 0,
        door: str = "map_function",
        ordered: bool = False,
    ) -> None:
        options = dict(options or {})
        if not isinstance(metric, (str, ScorerLike)):
            raise ArgumentTypeError(
                f"metric must be a spec string such as 'bertscore:minilm' or a Scorer, got {type(metric).__name__}"
            )
        if isinstance(metric, ScorerLike) and options:
            raise ArgumentError(f"options {sorted(options)} only apply to a metric given as a spec string")
        if reference_column is None and source_column is None:
            raise ArgumentError("give reference_column, source_column or both")
        for arg, column in (
            ("prediction_column", prediction_column),
            ("reference_column", reference_column),
            ("source_column", source_column),
            ("doc_id_column", doc_id_column),
        ):
            if column is not None and not isinstance(column, str):
                raise ArgumentTypeError(f"{arg} must be a column name (a str), got {type(column).__name__}: {column!r}")
        if prefix is not None and not isinstance(prefix, str):
            raise ArgumentTypeError(f"prefix must be a str (or None: the metric's name), got {type(prefix).__name__}")
        if isinstance(metric, str):  # an option the metric does not take fails here, not in a worker
            check_options(metric, **options)
        self.door = door
        self.ordered = ordered
        self._refuse_what_a_batch_changes(metric, options, context, doc_id_column)
        self.metric = metric
        self.prediction_column = prediction_column
        self.reference_column = reference_column
        self.source_column = source_column
        self.doc_id_column = doc_id_column
        self.context = int(context)
        self.output_prefix = prefix if prefix is not None else metric_prefix(metric)
        self.options = options
        self._told_unread = False

    # -- what the door may not do -------------------------------------------------------------

    def _refuse_what_a_batch_changes(
        self, metric: Union[str, ScorerLike], options: Dict[str, Any], context: Any, doc_id_column: Optional[str]
    ) -> None:
        """Refuse what the engine's batching would change: idf from each batch's references,
        document context cut at a batch's edge (both would move with the partitioning)."""
        unit = "partition" if self.ordered else ("map batch" if self.door == "map_function" else "batch")
        if options.get("context"):
            if self.ordered:
                raise ArgumentError(
                    f"{self.door} takes context= as its own argument (with doc_id_column=), not as a scorer option"
                )
            raise ArgumentError(
                f"{self.door} cannot read document context (context=): a {unit} may cut a document, and a "
                "sentence would lose the sentences before it; score documents with "
                "scorer.compute(..., context=k, doc_ids=...) or nlgscore.stream"
            )
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise ArgumentError(
                f"context must be an int >= 0 (how many previous sentences to read), got {type(context).__name__}: {context!r}"
            )
        if context and not self.ordered:
            raise ArgumentError(
                f"{self.door} cannot read document context (context={context}): the engine hands it batches that may "
                "cut a document, and a sentence would lose the sentences before it; score documents with "
                "scorer.compute(..., context=k, doc_ids=...), nlgscore.stream, or an adapter that scores whole "
                "partitions (nlgscore.integrations.spark, .dask, .curator)"
            )
        if context and doc_id_column is None:
            raise ArgumentError(
                f"context={context} needs doc_id_column (the column of document ids) to know where documents start"
            )
        if doc_id_column is not None and not context:
            raise ArgumentError(f"doc_id_column={doc_id_column!r} is only read with context= > 0")
        per_call = (
            bool(getattr(metric, "call_dependent", False))
            if isinstance(metric, ScorerLike)
            else bool(options.get("idf")) and options.get("idf_sents") is None
        )
        if per_call:
            changes = "batch_size and num_proc" if self.door == "map_function" else "the partitioning"
            raise ArgumentError(
                f"{self.door} with idf=True and no idf_sents would take idf from each {unit}'s references, "
                f"which changes with {changes}; BERTScore's idf is the test set's: pass "
                "idf_sents=nlgscore.integrations.datasets.idf_sentences(dataset, 'reference') (every reference, once)"
            )

    # -- the scorer and what it reads -----------------------------------------------------------

    @property
    def scorer(self) -> ScorerLike:
        """The scorer, built once per process (:func:`nlgscore.registry.cached`)."""
        if isinstance(self.metric, ScorerLike):
            return self.metric
        return cached(self.metric, **self.options)

    def reads_references(self) -> bool:
        """Whether the metric reads references (False for ``prism:src``, ``bartscore:...:src``)."""
        return self.reference_column is not None and "references" in tuple(
            getattr(self.scorer, "needs", ("references",))
        )

    def input_columns(self, available: Optional[Sequence[str]] = None) -> List[str]:
        """The columns a batch must hold, in the order prediction, reference, source, document id.

        Args:
            available: the table's columns, if known: a source-only metric does not read
                ``reference_column``, and when ``available`` holds it a warning says so once (the caller
                may expect it to count).

        Returns:
            The column names read.

        Example:
            >>> ColumnScorer("chrf").input_columns()
            ['prediction', 'reference']
        """
        reference = self._reference_column(available)
        named = (self.prediction_column, reference, self.source_column, self.doc_id_column if self.context else None)
        return [column for column in named if column is not None]

    def call_columns(self, columns: Sequence[Any]) -> List[Any]:
        """The columns a UDF call reads: ``columns`` (names or the engine's column objects, in the
        order of `input_columns`), or, with none given, `input_columns` themselves.

        Args:
            columns: the columns the UDF was called with (names or the engine's column objects);
                empty: the scorer's own input columns.

        Returns:
            The columns to read, one per input the metric needs, in `input_columns`' order.

        Raises:
            ArgumentTypeError: another number of columns than `input_columns`.

        Example:
            >>> ColumnScorer("chrf").call_columns([])
            ['prediction', 'reference']
        """
        inputs = self.input_columns()
        if columns and len(columns) != len(inputs):
            raise ArgumentTypeError(
                f"the score UDF takes {len(inputs)} columns ({', '.join(inputs)}), got {len(columns)}"
            )
        return list(columns) if columns else inputs

    def require(self, available: Sequence[str]) -> List[str]:
        """`input_columns`, checked against the table's columns.

        Args:
            available: the table's columns.

        Returns:
            The column names read, each among ``available``.

        Raises:
            KeyError: a column this scorer reads is not among ``available`` (naming the argument).

        Example:
            >>> ColumnScorer("chrf", reference_column="ref").require(["prediction", "answer"])  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            KeyError: "reference_column='ref': no such column in the data (its columns: answer, prediction); ..."
        """
        reference_column = self._reference_column(available)
        named = (
            ("prediction_column", self.prediction_column),
            ("reference_column", reference_column),
            ("source_column", self.source_column),
            ("doc_id_column", self.doc_id_column if self.context else None),
        )
        missing = [f"{arg}={column!r}" for arg, column in named if column and column not in available]
        if missing:
            raise KeyError(
                f"{', '.join(missing)}: no such column in the data (its columns: {', '.join(map(str, sorted(available)))}); "
                "name its columns with prediction_column=, reference_column= and source_column="
            )
        return [column for _, column in named if column]

    def _reference_column(self, available: Optional[Sequence[str]]) -> Optional[str]:
        if self.reference_column is None or self.reads_references():
            return self.reference_column
        if available is not None and self.reference_column in available and not self._told_unread:
            self._told_unread = True
            warnings.warn(
                f"{self.scorer.name} scores with sources only here: reference_column={self.reference_column!r} "
                "is not read (pass reference_column=None)",
                stacklevel=4,
            )
        return None

    def output_names(self) -> List[str]:
        """The output columns, ``<prefix>_<name>`` per column of the metric's result, in its order.

        Learned from an empty call of the scorer (which loads it in this process); a metric with a
        score per layer (``all_layers=True``) is refused, since a table cell holds one number.
        """
        scorer = self.scorer
        needs = tuple(getattr(scorer, "needs", ("references",)))
        empty = scorer.compute(
            [],
            references=[] if "references" in needs and self.reference_column else None,
            sources=[] if self.source_column is not None or "references" not in needs else None,
        )
        values = getattr(empty, "_values", None)
        if isinstance(values, dict) and any(getattr(v, "ndim", 1) != 1 for v in values.values()):
            raise ArgumentError(
                f"{self.door} writes one number per row and column, but this metric gives one per layer "
                "(all_layers=True): pick a layer with num_layers= instead"
            )
        return [self.column_name(name) for name in empty.columns()]

    def column_name(self, name: str) -> str:
        """The output column of the result's column ``name``: ``<prefix>_<name>``, or ``name`` bare.

        Args:
            name: a column of the metric's result (``f1``).

        Returns:
            The output column's name.

        Example:
            >>> ColumnScorer("bertscore:minilm", prefix="bs").column_name("f1")
            'bs_f1'
        """
        return f"{self.output_prefix}_{name}" if self.output_prefix else name

    # -- reading and scoring a batch ------------------------------------------------------------

    def read(self, batch: Mapping[str, Any]) -> Inputs:
        """The checked inputs of one batch.

        Args:
            batch: the batch, a mapping of column name to column (a list, or a numpy, pandas or Arrow
                array); nulls read as None, which a text column refuses.

        Returns:
            The batch's inputs, one entry per row.

        Raises:
            KeyError: a column this scorer reads is not in ``batch`` (naming the argument).
            ArgumentTypeError: a row an offline call refuses for its type (None, a number).
            ArgumentError: a row an offline call refuses for its value (an empty list of references, a
                lone surrogate).
        """
        from nlgscore.core.context import check_context
        from nlgscore.core.inputs import check_references, check_texts

        self.require(list(batch.keys()))
        reference_column = self._reference_column(None)
        predictions = plain_column(batch[self.prediction_column])
        n = len(predictions)

        def located(err: NlgscoreError, arg: str, column: str) -> NlgscoreError:
            rows = f"{n} row" if n == 1 else f"{n} rows"
            where = f"a batch of {rows} read from {arg}={column!r}; the index counts from the batch's first row"
            return type(err)(f"{err} ({where})")

        try:
            predictions = check_texts("predictions", predictions)
        except (ArgumentError, ArgumentTypeError) as err:
            raise located(err, "prediction_column", self.prediction_column) from None
        references = sources = doc_ids = None
        if reference_column is not None:
            try:
                references = check_references("references", plain_column(batch[reference_column]), n)
            except (ArgumentError, ArgumentTypeError) as err:
                raise located(err, "reference_column", reference_column) from None
        if self.source_column is not None:
            try:
                sources = check_texts("sources", plain_column(batch[self.source_column]))
            except (ArgumentError, ArgumentTypeError) as err:
                raise located(err, "source_column", self.source_column) from None
        if self.context and self.doc_id_column is not None:
            doc_ids = plain_column(batch[self.doc_id_column])
            try:
                check_context(self.context, doc_ids, n)
            except (ArgumentError, ArgumentTypeError) as err:
                raise located(err, "doc_id_column", self.doc_id_column) from None
        return Inputs(predictions, references, sources, doc_ids)

    def score(self, batch: Mapping[str, Any]) -> Dict[str, List[float]]:
        """The score columns of one batch, each one value per row in row order.

        Args:
            batch: the batch, a mapping of column name to column (as `read` takes it).

        Returns:
            Output column name to values, for every column of the metric's result.

        Raises:
            KeyError: as `read`.
            ArgumentTypeError: as `read`.
            ArgumentError: as `read`.
        """
        inputs = self.read(batch)
        extra: Dict[str, Any] = {"context": self.context, "doc_ids": inputs.doc_ids} if self.context else {}
        result = self.scorer.compute(inputs.predictions, references=inputs.references, sources=inputs.sources, **extra)
        return {self.column_name(name): values for name, values in result.columns().items()}

    def score_frame(self, frame: Any) -> Any:
        """``frame`` (a pandas DataFrame: a Ray, Dask or NeMo Curator batch) with its score columns
        added as ``float64``, its rows, index and other columns as they were.

        Args:
            frame: the batch.

        Returns:
            A new DataFrame (``frame`` is not changed).

        Raises:
            KeyError, ArgumentTypeError, ArgumentError: as :meth:`read`.
        """
        import pandas as pd

        scores = self.score({str(name): frame[name] for name in frame.columns})
        return frame.assign(
            **{name: pd.Series(values, index=frame.index, dtype="float64") for name, values in scores.items()}
        )

    def empty_frame(self, frame: Any) -> Any:
        """``frame``'s schema with the score columns (``float64``), no rows: what an engine that plans
        before it runs (Dask's ``meta=``) is told the output looks like.

        Args:
            frame: a pandas DataFrame, or an engine's frame that holds one as ``_meta`` (Dask).

        Returns:
            An empty pandas DataFrame of the output's columns and dtypes.

        Raises:
            KeyError: a column this scorer reads is not in ``frame`` (naming the argument).
        """
        import pandas as pd

        empty = getattr(frame, "_meta", frame).iloc[:0]
        self.require([str(column) for column in empty.columns])
        return empty.assign(**{name: pd.Series([], dtype="float64") for name in self.output_names()})

    def __repr__(self) -> str:
        return f"{self.door}({self.metric!r}, prefix={self.output_prefix!r})"
