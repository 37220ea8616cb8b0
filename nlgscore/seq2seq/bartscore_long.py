"""BARTScore's (encoder text, target) pairs as token ids, under a ``long_inputs`` setting.

``"truncate"`` (and ``"error"``, whose over-long texts are refused before scoring) take the ids
of the authors' scorer: BOS/EOS added, cut at ``max_length``. ``"auto"`` tokenises without a cut;
a pair whose texts both fit keeps exactly those ids, and a pair with an over-long text is
planned in sentence chunks (:mod:`nlgscore.seq2seq.chunking`), the special tokens of the
checkpoint's tokenizer (BOS/EOS for BART) around every chunk and piece.

>>> from transformers import AutoTokenizer
>>> pairs = BartPairs(AutoTokenizer.from_pretrained("tests/golden/tiny-bart"), max_length=16, long_inputs="auto")
>>> side = pairs.side()
>>> side.head, side.tail, side.limit
((0,), (2,), 14)
>>> plan, targets = pairs.plan(["One sentence here. " * 6], ["A short summary."], encode=None)
>>> pairs.long_text("One sentence here. " * 6).sentences()[:2]  # 9 tokens each (a tiny vocabulary)
[(0, 9), (9, 18)]
>>> plan.windows, len(plan.sources)  # 6 sentences of 9 tokens: one chunk each under a limit of 14
([6], 6)
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.backend.batching import unique
from nlgscore.core.long_inputs import too_long
from nlgscore.errors import ArgumentError
from nlgscore.seq2seq.chunking import LongText, Plan, Side
from nlgscore.seq2seq.doc_context import with_context

# BART reads English: sentencex's English rules (they also end sentences at CJK/Devanagari stops).
SPLIT_LANG = "en"


class BartPairs:
    """Token ids and plans of BARTScore pairs for one tokenizer, ``max_length`` and ``long_inputs``."""

    def __init__(self, tokenizer: Any, max_length: int, long_inputs: str) -> None:
        self.tokenizer, self.max_length, self.long_inputs = tokenizer, max_length, long_inputs
        self._side: Optional[Side] = None

    def side(self) -> Side:
        """The tokenizer's special tokens around a text (read from a probe) and the content limit."""
        if self._side is None:
            probe = self.tokenizer("a", verbose=False)["input_ids"]
            content = self.tokenizer("a", add_special_tokens=False, verbose=False)["input_ids"]
            at = next((k for k in range(len(probe) - len(content) + 1) if probe[k : k + len(content)] == content), None)
            if at is None or not content:
                raise ArgumentError(
                    "long_inputs='auto' cannot find a text between the special tokens of "
                    f"{type(self.tokenizer).__name__}; use long_inputs='truncate'"
                )
            head, tail = tuple(probe[:at]), tuple(probe[at + len(content) :])
            self._side = Side(head, tail, self.max_length - len(head) - len(tail))
        return self._side

    def full_ids(self, texts: List[str]) -> List[List[int]]:
        """Ids with the special tokens, not cut (within ``max_length``: the truncating ids)."""
        return [list(row) for row in self.tokenizer(texts, verbose=False)["input_ids"]] if texts else []

    def long_text(self, text: str) -> LongText:
        if not getattr(self.tokenizer, "is_fast", False):  # only a fast tokenizer gives token offsets
            raise ArgumentError(
                "long_inputs='auto' needs a fast tokenizer for sentence offsets, "
                f"got {type(self.tokenizer).__name__}; use long_inputs='truncate'"
            )
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return LongText(text, encoded["input_ids"], [tuple(span) for span in encoded["offset_mapping"]], SPLIT_LANG)

    def plan(
        self,
        srcs: Sequence[Any],
        tgts: Sequence[Any],
        encode: Optional[Callable[[List[str]], List[List[int]]]],
        starts: Optional[List[int]] = None,
    ) -> Tuple[Plan, List[List[int]]]:
        """The plan of the pairs ``zip(srcs, tgts)`` and each pair's whole target ids. ``encode``
        gives the truncating ids (``"truncate"``/``"error"``); ``"auto"`` does not use it. A text
        read after its document context is a :data:`~nlgscore.seq2seq.doc_context.ContextText`;
        ``starts``, if given, gets per pair the first target position the score counts."""
        srcs, tgts = self._with_context(srcs, tgts, encode, starts)
        texts, index = unique(list(srcs) + list(tgts))  # each distinct text is tokenised once
        auto = self.long_inputs == "auto"
        plain = [t for t in texts if isinstance(t, str)]
        got = dict(zip(plain, self.full_ids(plain) if auto else encode(plain)))  # type: ignore[misc]
        ids = [list(t) if isinstance(t, tuple) else got[t] for t in texts]  # a tuple: ids built with context
        side = self.side() if auto else Side((), (), None)
        plan = Plan(side, side)
        longs: Dict[int, LongText] = {}
        targets = []
        for s, t in zip(index[: len(srcs)], index[len(srcs) :]):
            if auto and max(len(ids[s]), len(ids[t])) > self.max_length:
                source, target = (longs.setdefault(k, self._checked_long(texts[k], ids[k])) for k in (s, t))
                plan.add_long(source, target)
            else:
                plan.add(ids[s], ids[t])
            targets.append(ids[t])
        return plan, targets

    def _with_context(
        self, srcs: Sequence[Any], tgts: Sequence[Any], encode: Any, starts: Optional[List[int]]
    ) -> Tuple[List[Any], List[Any]]:
        """The pairs with each context side as its ids (a tuple: what fits of the context, the
        separator after each sentence); a sentence too long alone stays a text, read without context."""
        sides = [x for x in list(srcs) + list(tgts) if not isinstance(x, str)]
        if not sides:
            if starts is not None:
                starts.extend([0] * len(tgts))
            return list(srcs), list(tgts)
        head, tail, room = (
            self.side().head,
            self.side().tail,
            self.max_length - len(self.side().head) - len(self.side().tail),
        )
        texts = list(dict.fromkeys(t for ctx, text in sides for t in (*ctx, text)))
        content = dict(zip(texts, self.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]))

        def read(x: Any) -> Tuple[Any, int]:
            if isinstance(x, str):
                return x, 0
            built = with_context(
                [content[c] for c in x[0]], content[x[1]], self.tokenizer.sep_token_id, lambda n: n <= room
            )
            if built is None or not built[1]:
                return x[1], 0
            ids, at = built
            # The separator before the sentence stands where the sentence's own opening token would.
            return (*head, *ids, *tail), len(head) + at - 1

        pairs = [(read(s)[0], read(t)) for s, t in zip(srcs, tgts)]
        if starts is not None:
            starts.extend(start for _, (_, start) in pairs)
        return [s for s, _ in pairs], [t for _, (t, _) in pairs]

    def _checked_long(self, text: str, ids: List[int]) -> LongText:
        long = self.long_text(text)
        if self.side().wrap(long.ids) != ids:  # the content ids must be the whole text's, or the layout is not BART's
            raise ArgumentError(
                "long_inputs='auto': the tokenizer's ids of a text without special tokens do not nest in its ids with them; "
                "use long_inputs='truncate'"
            )
        return long

    def check(self, named: Sequence[Tuple[str, str]]) -> None:
        """``long_inputs="error"``: refuse the first ``(name, text)`` over ``max_length`` tokens."""
        texts = list(dict.fromkeys(text for _, text in named))
        lengths = dict(zip(texts, (len(row) for row in self.full_ids(texts))))
        for name, text in named:
            if lengths[text] > self.max_length:
                raise too_long(
                    name,
                    lengths[text],
                    self.max_length,
                    f"BARTScore's max_length ({type(self.tokenizer).__name__} ids, special tokens included)",
                )


def counted(pad_id: int) -> Callable[[List[int]], np.ndarray]:
    """Which target tokens BARTScore's sum counts: every one but a pad id (the reference's quirk)."""
    return lambda ids: (np.asarray(ids) != pad_id).astype(np.float64)


__all__ = ["BartPairs", "counted"]
