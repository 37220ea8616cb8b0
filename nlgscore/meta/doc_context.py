"""Segment scores of one system with document context (``--context k``), for the meta tasks.

A system's segments are scored in one call in their data set's order, with the data set's
document id of each segment, so every segment reads the previous ``k`` segments of its document
(:mod:`nlgscore.core.context`). Nothing is de-duplicated or chunked before the call: two equal
(hypothesis, reference) pairs of different documents have different contexts (the core still
scores an item and its context once), and a chunk boundary would cut a document.

>>> from nlgscore.registry import cached
>>> scorer = cached("bertscore:minilm:L2")
>>> scores, signature = segment_scores_in_context(scorer, "bertscore:minilm:L2", ["A cat sat.", "It slept."],
...                                               ["The cat sat.", "It was asleep."], None, ["d1", "d1"], 1)
>>> len(scores), "|ctx:1|" in signature
(2, True)
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from nlgscore.errors import ArgumentError

__all__ = ["segment_scores_in_context"]


def segment_scores_in_context(
    scorer: Any,
    spec: str,
    hyps: Sequence[str],
    refs: Sequence[str],
    srcs: Optional[Sequence[str]],
    doc_ids: Sequence[Any],
    context: int,
) -> Tuple[List[float], str]:
    """One score per segment (input order) from ``scorer``'s primary column, each segment read
    after the previous ``context`` segments of its document (``doc_ids``, one per segment, each
    document's segments consecutive), and the signature (``ctx:k`` in it)."""
    if not getattr(scorer, "takes_context", False):
        raise ArgumentError(
            f"--context {context}: metric {spec!r} does not read document context (BERTScore, Prism and BARTScore do)"
        )
    needs = tuple(getattr(scorer, "needs", ("references",)))
    kwargs = {"references": list(refs)} if "references" in needs else {}
    if "sources" in needs:
        if srcs is None:
            raise ArgumentError(f"metric {spec!r} needs sources, but this data set has none")
        kwargs["sources"] = list(srcs)
    result = scorer.compute(list(hyps), context=context, doc_ids=list(doc_ids), **kwargs)
    column = result.columns()[result.primary]
    return [float(v) for v in column], str(result.signature)
