"""Scoring a corpus window by window: memory bounded by the window, output in input order.

A window is one ``scorer.compute`` call on ``window`` consecutive rows, so de-duplication and
length-sorted batching happen inside it (as in any ``compute`` call) and nothing of a finished
window is kept. Each pair's score does not depend on its neighbours, so the scores equal one
``compute`` call on the whole corpus (to float rounding); an idf computed from each call's
references would depend on the window and is refused.

>>> import nlgscore
>>> from nlgscore.stream.readers import lists
>>> scorer = nlgscore.load("bertscore:minilm:L2")
>>> rows = list(score_stream(scorer, lists(["a cat", "a dog", "a cow"], references=["the cat", "the dog", "a cow"]), window=2))
>>> [sorted(row) for row in rows][0], len(rows), round(rows[2]["f1"], 6)
(['f1', 'precision', 'recall'], 3, 1.0)
"""

from __future__ import annotations

import hashlib
import json
from itertools import islice
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Tuple, cast

from nlgscore.core.long_inputs import LongInputError
from nlgscore.errors import ArgumentError
from nlgscore.stream.readers import Inputs, Row

if TYPE_CHECKING:  # the CLI's parser imports this module for DEFAULT_WINDOW: no torch/numpy then
    from nlgscore.core.result import Result
    from nlgscore.core.scorer_like import ScorerLike

# Rows per compute call: large enough for de-duplication and length sorting to pay off, small
# enough that a window's texts and token ids are a few MB, and that a resumed run redoes little.
DEFAULT_WINDOW = 8192


def check_window(window: Any) -> int:
    """``window`` as a positive int, else an error naming it."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ArgumentError(f"window must be a positive integer (rows per compute call), got {window!r}")
    return window


def check_streamable(scorer: "ScorerLike") -> None:
    """Refuse settings whose scores depend on the whole call (not on each pair alone)."""
    # the scorer's capability, e.g. BERTScore's idf=True without idf_sents (idf from each call's references)
    if getattr(scorer, "call_dependent", False):  # a duck-typed scorer (a remote one) declares it or is per-item
        raise ArgumentError(
            "idf taken from each call's references would change with the window: fix the idf first "
            "(idf_sents=..., or scorer.compute_idf(sentences)) to score a corpus in windows"
        )


def chunks(rows: Iterator[Row], size: int) -> Iterator[List[Row]]:
    """Consecutive lists of ``size`` rows (the last may be shorter).

    >>> [len(c) for c in chunks(iter(range(5)), 2)]
    [2, 2, 1]
    """
    while True:
        chunk = list(islice(rows, size))
        if not chunk:
            return
        yield chunk


def score_chunk(scorer: "ScorerLike", chunk: List[Row], inputs: Inputs, *, start: int = 0, **options: Any) -> "Result":
    """One ``compute`` call on ``chunk`` (references and/or sources as ``inputs`` has them), the
    rows ``start`` onwards of the corpus: an error naming an item names its row in the corpus."""
    predictions = [row[0] for row in chunk]
    references = [row[1] for row in chunk] if inputs.has_references else None
    sources = (
        cast(List[str], [row[2] for row in chunk]) if inputs.has_sources else None
    )  # a corpus with sources has one per row
    try:
        return scorer.compute(predictions, references=references, sources=sources, **options)
    except LongInputError as err:
        raise err.shifted(start) from None


def score_windows(
    scorer: "ScorerLike", inputs: Inputs, *, window: int = DEFAULT_WINDOW, rows: Any = None, **options: Any
) -> Iterator[Tuple[List[Row], "Result"]]:
    """``(rows, result)`` per window of ``inputs``, in order: one ``compute`` call per window.

    Args:
        scorer: a loaded scorer (local or remote) whose scores do not depend on the whole call.
        inputs: the corpus, from a reader of :mod:`nlgscore.stream.readers`.
        window: rows per ``compute`` call (memory is bounded by it, not by the corpus).
        rows: an iterator of the corpus's rows to read instead of ``inputs.rows()`` (a resumed
            run that has skipped the rows done).
        **options: ``compute``'s keywords for every call (``batch_size``, ``max_tokens`` ...).

    Yields:
        Each window's rows and its result.

    Raises:
        ArgumentError: a bad window, inputs with neither references nor sources, or a scorer
            whose scores depend on the call (BERTScore's idf from each call's references).
    """
    check_window(window)
    check_streamable(scorer)
    if not (inputs.has_references or inputs.has_sources):
        raise ArgumentError("the inputs have neither references nor sources: give a reference or source column/file")
    start = 0
    for chunk in chunks(iter(rows if rows is not None else inputs.rows()), window):
        yield chunk, score_chunk(scorer, chunk, inputs, start=start, **options)
        start += len(chunk)


def item_rows(result: "Result") -> List[Dict[str, Any]]:
    """Per-item ``{column: value}`` dicts of ``result`` (a list per layer for 2-D columns).

    >>> from nlgscore.core.result import Result
    >>> from nlgscore.core.signature import Signature
    >>> item_rows(Result(Signature("toy", _versions=False), {"s": [0.5, 1.0]}, "s"))
    [{'s': 0.5}, {'s': 1.0}]
    """
    import numpy as np

    columns = {name: np.asarray(values, dtype=np.float64) for name, values in result.columns().items()}
    return [{name: values[..., k].tolist() for name, values in columns.items()} for k in range(len(result))]


def score_stream(
    scorer: "ScorerLike", inputs: Inputs, *, window: int = DEFAULT_WINDOW, **options: Any
) -> Iterator[Dict[str, Any]]:
    """Per-item score rows of a corpus, in input order, computed ``window`` rows at a time.

    Memory is bounded by the window, not by the corpus.

    Args:
        scorer: a loaded scorer (local or remote) whose scores do not depend on the whole call.
        inputs: the corpus, from :mod:`nlgscore.stream.readers` (text files, JSONL, TSV/CSV,
            Parquet, ``datasets``, lists).
        window: rows per ``compute`` call.
        **options: ``compute``'s keywords for every call (``batch_size``, ``max_tokens`` ...).

    Yields:
        One ``{column: value}`` dict per item (a list per layer for 2-D columns).

    Raises:
        ArgumentError: as :func:`score_windows`.

    Example:
        >>> from nlgscore import load
        >>> from nlgscore.stream.readers import lists
        >>> [row["score"] for row in score_stream(load("chrf"), lists(["a cat"], ["a cat"]))]
        [100.0]
    """
    for _, result in score_windows(scorer, inputs, window=window, **options):
        yield from item_rows(result)


class RowDigest:
    """A running SHA-256 of the input rows read so far (what a resumed run re-checks).

    >>> a, b = RowDigest(), RowDigest()
    >>> a.update([("x", "y", None)]); b.update([("x", "z", None)])
    >>> a.hexdigest() == b.hexdigest()
    False
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, rows: List[Row]) -> None:
        for row in rows:
            self._hash.update(json.dumps(row, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
