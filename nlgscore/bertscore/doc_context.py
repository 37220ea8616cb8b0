"""Document-level BERTScore: each side encoded after its document context, its own tokens matched.

The recipe of Vernikos et al. (WMT 2022, ``amazon-science/doc-mt-metrics``, ``bert_score/``):
the previous reference sentences are joined before both the candidate and the reference with the
tokenizer's separator (``" [SEP] ".join(context + [sentence])``, ``add_context.py``), the whole
text is encoded, and the tokens before the last separator get weight 0
(``collate_idf_with_context`` in ``bert_score/utils.py``): the current sentence's tokens carry
the score, while every token, context included, stays a candidate of the greedy max. A text
without context is encoded and weighted exactly as sentence-level BERTScore does.

With ``idf``, the current sentence's tokens keep their idf weights (``doc-mt-metrics`` turns
them into 0/1 by ``np.logical_and``; without idf the two agree), and a call's idf comes from its
reference sentences without their context.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from nlgscore.core.context import join_context
from nlgscore.core.inputs import Item
from nlgscore.errors import ArgumentError

Key = Tuple[str, bool]  # (the text encoded, whether it holds context)


def side_keys(items: List[Item], separator: Optional[str]) -> Tuple[List[Key], List[Key]]:
    """The candidate and reference texts to encode for ``items``: each after its context."""

    def key(text: str, context: Tuple[str, ...]) -> Key:
        if not context:
            return text, False
        if separator is None:
            raise ArgumentError(
                "context needs a model whose tokenizer has a separator token (sep_token); this one has none"
            )
        return join_context(context, text, separator), True

    hyps = [key(i.prediction, i.context.prediction if i.context else ()) for i in items]
    # every BERTScore item has a reference: the base flattens one item per (prediction, reference)
    refs = [key(i.reference or "", i.context.reference if i.context else ()) for i in items]
    return hyps, refs


def scored_starts(encoder: Any, keys: List[Key], ids: List[List[int]], truncated: bool) -> Dict[int, int]:
    """Per text with context (index into ``keys``), the position of its first scored token: the
    one after the last separator before the suffix, found in the whole text even where
    ``truncated`` ids were cut."""
    with_context = [u for u, (_, has) in enumerate(keys) if has]
    if not with_context:
        return {}
    whole = (
        encoder.tokenize([keys[u][0] for u in with_context], truncate=False)[0]
        if truncated
        else [ids[u] for u in with_context]
    )
    sep, head, tail = encoder.tokenizer.sep_token_id, len(encoder.prefix), len(encoder.suffix)
    starts = {}
    for u, full in zip(with_context, whole):
        content = full[head : len(full) - tail]
        marks = [p for p, token in enumerate(content) if token == sep]
        if not marks:
            raise ArgumentError(
                f"context: the tokenizer did not keep the separator {encoder.tokenizer.sep_token!r} as one token in {keys[u][0]!r}"
            )
        starts[u] = head + marks[-1] + 1
    return starts
