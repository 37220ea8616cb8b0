"""Document context for the likelihood metrics: a text's ids after its previous sentences.

The recipe of Vernikos et al. (WMT 2022, ``amazon-science/doc-mt-metrics``, ``Prism/``): both the
encoder text and the target are the sentence after its document context, the sentences joined by
the end-of-sentence token (``" </s> ".join(context + [sentence])``, ``add_context.py``), and the
score counts only the target's current sentence (``Prism/prism.py`` finds where it starts from the
token length of the text after the last separator). Here the ids are built piece by piece: each
context sentence's ids, then ``</s>``, then the sentence's ids, which is what a SentencePiece
tokenizer makes of the joined text, separators included. The counted tokens are those the metric
counts for the sentence alone (Prism: the sentence's tokens and its ``</s>``; BARTScore: the
same, after the decoder's start), so a line without context scores exactly as at sentence level.

Context that would push a text past the model's positions is dropped, oldest sentence first; a
sentence too long even alone is scored without context, by the metric's ``long_inputs`` rule.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["ContextText", "read_side", "with_context"]

# A text and the previous sentences of its document it is read after (oldest first).
ContextText = Tuple[Tuple[str, ...], str]


def with_context(
    context: Sequence[List[int]], ids: List[int], separator: int, fits: Callable[[int], bool]
) -> Optional[Tuple[List[int], int]]:
    """``(content ids, where the sentence starts)`` of ``ids`` after as many of the latest
    ``context`` sentences' ids as fit, each followed by ``separator``; None if ``ids`` alone does
    not fit (the caller scores it without context).

    >>> with_context([[5, 6], [7]], [8, 9], 2, lambda n: n <= 5)  # the older sentence does not fit
    ([7, 2, 8, 9], 2)
    >>> with_context([[5, 6], [7]], [8, 9], 2, lambda n: True)
    ([5, 6, 2, 7, 2, 8, 9], 5)
    """
    if not fits(len(ids)):
        return None
    kept: List[int] = []
    for sentence in reversed(context):
        candidate = list(sentence) + [separator] + kept
        if not fits(len(candidate) + len(ids)):
            break
        kept = candidate
    return kept + list(ids), len(kept)


def read_side(
    side: Any, ids: Dict[str, List[int]], separator: int, fits: Callable[[int], bool]
) -> Tuple[List[int], int]:
    """``(content ids, where the sentence starts)`` of one side of a pair: a text (``ids[text]``,
    0) or a :data:`ContextText` (:func:`with_context`; its sentence must fit alone)."""
    if isinstance(side, str):
        return ids[side], 0
    read = with_context([ids[c] for c in side[0]], ids[side[1]], separator, fits)
    if read is None:
        raise ValueError("read_side: the sentence does not fit alone (score it without context)")
    return read
