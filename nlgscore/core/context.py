"""Document context: the previous sentences of an item's document, carried by the item.

Document-level BERTScore, Prism and BARTScore follow Vernikos, Thompson, Mathur and Federico,
"Embarrassingly Easy Document-Level MT Metrics" (WMT 2022; code ``amazon-science/doc-mt-metrics``,
``add_context.py``): each sentence is still scored on its own, but the model also reads the
previous ``k`` sentences of its document, and only the sentence's own tokens are counted. With
references, the *reference's* previous sentences are the context of both the prediction and the
reference (the prediction's own previous sentences may be wrong, the reference's are not); a
call scored against sources takes the sources' previous sentences for the source and the
predictions' previous sentences for the prediction (their COMET-QE recipe).

A document is a run of consecutive lines with the same document id (as ``add_context`` walks
them); an id that comes back after another document is refused, since its "previous sentences"
would be ambiguous. The first line of a document has no context and scores as without it.

The context travels with its item (:attr:`nlgscore.core.inputs.Item.context`), so an item scores
the same alone, in any batch, merged call, chunk or process.

>>> ctx = item_contexts(2, ["d1", "d1", "d1", "d2"], ["p0", "p1", "p2", "q0"], [["r0"], ["r1"], ["r2"], ["s0"]], None)
>>> [row[0].reference if row[0] else None for row in ctx]
[None, ('r0',), ('r0', 'r1'), None]
>>> ctx[2][0].prediction  # the reference's previous sentences, as for the reference
('r0', 'r1')
>>> check_context(1, None, 3)
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: context=1 needs doc_ids (one document id per prediction) to know where documents start
"""

from __future__ import annotations

import numbers
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from nlgscore.errors import ArgumentError, ArgumentTypeError

__all__ = ["Context", "check_context", "item_contexts", "join_context"]


class Context(NamedTuple):
    """The previous sentences (oldest first) that each side of an item is read after."""

    prediction: Tuple[str, ...] = ()
    reference: Tuple[str, ...] = ()
    source: Tuple[str, ...] = ()


def check_context(context: Any, doc_ids: Any, n: int) -> Tuple[int, Optional[List[str]]]:
    """``(k, doc_ids as strings)`` of checked arguments; errors name the argument.

    ``context`` must be an int >= 0; ``doc_ids`` one id (str or int) per prediction, each
    document's lines consecutive; required when ``context > 0``.
    """
    if isinstance(context, numbers.Integral) and not isinstance(context, (bool, int)):
        context = int(context)  # a numpy integer (a dataframe's column): its value
    if isinstance(context, bool) or not isinstance(context, int):
        raise ArgumentTypeError(
            f"context must be an int (how many previous sentences to read), got {type(context).__name__}: {context!r}"
        )
    if context < 0:
        raise ArgumentError(f"context must be >= 0 (how many previous sentences to read), got {context}")
    if doc_ids is None:
        if context:
            raise ArgumentError(
                f"context={context} needs doc_ids (one document id per prediction) to know where documents start"
            )
        return 0, None
    if isinstance(doc_ids, (str, bytes, set, frozenset, dict)) or not hasattr(doc_ids, "__len__"):
        raise ArgumentTypeError(
            f"doc_ids must be a list of document ids (one per prediction), got {type(doc_ids).__name__}"
        )
    ids = list(doc_ids)
    if len(ids) != n:
        raise ArgumentError(
            f"doc_ids has {len(ids)} items but there are {n} predictions (one document id per prediction)"
        )
    out: List[str] = []
    for i, doc in enumerate(ids):
        if isinstance(doc, bool) or not isinstance(doc, (str, numbers.Integral)):
            raise ArgumentTypeError(f"doc_ids[{i}] must be a str or int document id, got {type(doc).__name__}: {doc!r}")
        out.append(doc if isinstance(doc, str) else str(int(doc)))  # a numpy integer as its value
    seen = set()
    for i, doc in enumerate(out):
        if i and doc != out[i - 1]:
            if doc in seen:
                raise ArgumentError(
                    f"doc_ids[{i}] is {doc!r} again after another document: a document's lines must be consecutive"
                )
            seen.add(out[i - 1])
    return context, out


def _previous(k: int, doc_ids: Sequence[str]) -> List[range]:
    """Per line, the lines of its context: up to ``k`` lines before it in its document."""
    spans, start = [], 0
    for i, doc in enumerate(doc_ids):
        if i and doc != doc_ids[i - 1]:
            start = i
        spans.append(range(max(start, i - k), i))
    return spans


def item_contexts(
    k: int,
    doc_ids: Sequence[str],
    predictions: Sequence[str],
    references: Optional[Sequence[Sequence[str]]],
    sources: Optional[Sequence[str]],
) -> List[List[Optional[Context]]]:
    """Per prediction, one :class:`Context` per reference (one if there are none); None where the
    line has no previous sentence. Reference ``j`` is read after the previous lines' reference
    ``j`` (their first if they have fewer)."""
    out: List[List[Optional[Context]]] = []
    for i, lines in enumerate(_previous(k, doc_ids)):
        if not lines:
            out.append([None] * (len(references[i]) if references is not None else 1))
            continue
        src = tuple(sources[p] for p in lines) if sources is not None else ()
        if references is None:
            out.append([Context(tuple(predictions[p] for p in lines), (), src)])
            continue
        row: List[Optional[Context]] = []
        for j in range(len(references[i])):
            ref = tuple(references[p][j] if j < len(references[p]) else references[p][0] for p in lines)
            row.append(Context(ref, ref, src))
        out.append(row)
    return out


def join_context(context: Tuple[str, ...], text: str, separator: str) -> str:
    """``text`` after its context, each sentence followed by ``separator`` (``add_context``'s
    ``" {sep} ".join(context + [text])``).

    >>> join_context(("A b.", "C d."), "E f.", "[SEP]")
    'A b. [SEP] C d. [SEP] E f.'
    """
    return f" {separator} ".join(context + (text,))
