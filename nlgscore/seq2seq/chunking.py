"""Long inputs for the likelihood metrics (Prism, BARTScore): sentence chunks instead of a cut.

``long_inputs="auto"`` (the default) scores every token of a text longer than the model's limit:

* an over-long **encoder-side** text (a source; a reference in Prism-ref and in BARTScore's
  reference directions; a prediction in the reverse directions) is cut into **chunks** of whole
  sentences, packed greedily in text order while they fit the limit;
* a **target** longer than the decoder's limit is cut the same way into **pieces**, each scored
  as a target of its own (with the special tokens of a target); of each piece's specials, only the
  first piece's leading ones and the last piece's trailing ones are kept, so the scored tokens are
  exactly the whole target's tokens, each once;
* every piece is scored against every chunk; each target **segment** (a sentence, when the
  encoder text had to be chunked; else a piece) takes the log-probabilities of the chunk under
  which its counted tokens have the highest sum (the first such chunk on a tie). The metric then
  reduces the assembled per-token array as usual: a mean over tokens is the token-weighted mean
  over sentences, and a one-sentence target gets the max over chunks;
* a single sentence longer than the limit is cut into consecutive token windows of the limit,
  which then count as sentences: nothing is dropped and nothing fails.

Sentences come from ``sentencex`` (Wikimedia's rule-based segmenter, ~300 languages, no model
download); a token belongs to the sentence holding its first non-space character (token offsets
from the tokenizer), so chunk boundaries fall between tokens of the text as it was tokenised
whole. A pair whose two texts fit is scored exactly as ``"truncate"`` scores it (one pair, the same
ids): within the limit the three settings give bit-identical numbers.

>>> text = LongText("One two. Three four five. Six.", [1, 2, 3, 4, 5, 6], [(0, 3), (4, 8), (9, 14), (15, 19), (20, 25), (26, 30)], "en")
>>> text.sentences(), text.units(2)  # the 3-token sentence is cut into windows of 2
([(0, 2), (2, 5), (5, 6)], [(0, 2), (2, 4), (4, 5), (5, 6)])
>>> pack(text.units(2), 4), pack(text.sentences(), 4)
([(0, 4), (4, 6)], [(0, 2), (2, 6)])
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

Span = Tuple[int, int]


def sentence_starts(text: str, lang: str) -> List[int]:
    """Character offsets where the sentences of ``text`` start (``sentencex`` rules for ``lang``;
    a language it does not know falls back to its generic rules).

    >>> sentence_starts("Dr. Smith came. He sat!  Then left", "en")
    [0, 16, 25]
    """
    import sentencex

    return [int(b["start_index"]) for b in sentencex.get_sentence_boundaries(lang, text)] or [0]


class LongText:
    """A text's content token ids (no special tokens), their character spans, and its language."""

    def __init__(self, text: str, ids: Sequence[int], offsets: Sequence[Span], lang: str) -> None:
        if len(ids) != len(offsets):
            raise ValueError(f"{len(ids)} token ids but {len(offsets)} offsets")
        self.text, self.ids, self.offsets, self.lang = text, list(ids), list(offsets), lang
        self._sentences: Optional[List[Span]] = None

    def __len__(self) -> int:
        return len(self.ids)

    def sentences(self) -> List[Span]:
        """Token ranges of the sentences, in order, covering every token once."""
        if self._sentences is None:
            starts = sentence_starts(self.text, self.lang)
            spans: List[Span] = []
            current = -1
            for t, (begin, end) in enumerate(self.offsets):
                piece = self.text[begin:end]
                first = begin + (len(piece) - len(piece.lstrip())) if piece.strip() else begin
                sentence = max(current, bisect_right(starts, first) - 1)  # never back: ranges stay contiguous
                if sentence != current or not spans:
                    spans.append((t, t + 1))
                    current = sentence
                else:
                    spans[-1] = (spans[-1][0], t + 1)
            self._sentences = spans
        return self._sentences

    def units(self, limit: int) -> List[Span]:
        """The sentences, each longer than ``limit`` tokens cut into consecutive windows of ``limit``."""
        if limit < 1:  # a window with no token cannot cover a sentence
            raise ValueError(f"a window needs at least 1 token, got limit={limit}")
        out: List[Span] = []
        for a, b in self.sentences():
            out.extend((s, min(s + limit, b)) for s in range(a, b, limit))
        return out


def pack(units: Sequence[Span], limit: int) -> List[Span]:
    """Consecutive ``units`` packed greedily into ranges of at most ``limit`` tokens (each unit fits)."""
    out: List[Span] = []
    for a, b in units:
        if out and b - out[-1][0] <= limit:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


@dataclass(frozen=True)
class Side:
    """How content ids become the model's ids on one side: ``head + content + tail``, with at most
    ``limit`` content tokens (None: no limit)."""

    head: Tuple[int, ...]
    tail: Tuple[int, ...]
    limit: Optional[int]

    def fits(self, n: int) -> bool:
        return self.limit is None or n <= self.limit

    def wrap(self, ids: Sequence[int]) -> List[int]:
        return list(self.head) + list(ids) + list(self.tail)


class _LongPair:
    """One over-long (encoder text, target) pair: where its sub-pairs start, and how to assemble them."""

    def __init__(
        self,
        first: int,
        chunks: List[Span],
        pieces: List[Span],
        segments: List[Tuple[Span, int]],
        target_ids: List[int],
        side: Side,
    ) -> None:
        self.first, self.chunks, self.pieces, self.segments = first, chunks, pieces, segments
        self.target_ids, self.side = target_ids, side

    def assemble(self, logprobs: Sequence[np.ndarray], counted: np.ndarray) -> np.ndarray:
        hd, total = len(self.side.head), len(self.target_ids)
        n = total - hd - len(self.side.tail)
        out = np.empty(total, dtype=np.float64)
        k = len(self.chunks)
        for (u, v), p in self.segments:
            a = self.pieces[p][0]
            start, stop = hd + u if u else 0, hd + v if v < n else total  # the first/last segment takes the specials
            at = start if start < hd else start - a  # where `start` sits in the piece's scored ids
            runs = [logprobs[self.first + p * k + c][at : at + stop - start] for c in range(k)]
            sums = [float(np.dot(run, counted[start:stop])) for run in runs]
            out[start:stop] = runs[int(np.argmax(sums))]
        return out


class Plan:
    """The pairs to score for a list of (encoder text, target) pairs, and how to read them back.

    Add each pair with :meth:`add` (exact ids: a pair that fits) or :meth:`add_long`; score
    :attr:`sources`/:attr:`targets`; :meth:`assemble` gives, per added pair, the per-token
    log-probabilities of its whole target (``target.head + content + target.tail``).
    :attr:`windows` counts, per added pair, the (chunk, piece) pairs scored for it.
    """

    def __init__(self, encoder: Side, target: Side) -> None:
        self.encoder, self.target = encoder, target
        self.sources: List[List[int]] = []
        self.targets: List[List[int]] = []
        self.windows: List[int] = []
        self._pairs: List[Tuple[int, Optional[_LongPair]]] = []

    def add(self, source_ids: List[int], target_ids: List[int]) -> None:
        self._pairs.append((len(self.sources), None))
        self.windows.append(1)
        self.sources.append(source_ids)
        self.targets.append(target_ids)

    def add_long(self, source: LongText, target: LongText) -> None:
        enc, dec = self.encoder, self.target
        chunks = [(0, len(source))] if enc.fits(len(source)) else pack(source.units(enc.limit), enc.limit)  # type: ignore[arg-type]
        pieces = [(0, len(target))] if dec.fits(len(target)) else pack(target.units(dec.limit), dec.limit)  # type: ignore[arg-type]
        if len(chunks) > 1:  # every sentence picks its chunk (the pieces are packed from the same units)
            units = target.units(dec.limit) if dec.limit is not None else target.sentences()
            starts = [a for a, _ in pieces]
            segments = [(u, bisect_right(starts, u[0]) - 1) for u in units]
        else:
            segments = [(piece, p) for p, piece in enumerate(pieces)]
        first = len(self.sources)
        for a, b in pieces:
            for c, d in chunks:
                self.sources.append(enc.wrap(source.ids[c:d]))
                self.targets.append(dec.wrap(target.ids[a:b]))
        self._pairs.append((first, _LongPair(first, chunks, pieces, segments, dec.wrap(target.ids), dec)))
        self.windows.append(len(chunks) * len(pieces))

    def assemble(self, logprobs: Sequence[np.ndarray], counted: Callable[[List[int]], np.ndarray]) -> List[np.ndarray]:
        """Per added pair, its whole target's per-token log-probabilities. ``counted(target_ids)``
        weighs the tokens of a target in the metric's score (1 counted, 0 not): a segment takes
        the chunk with the highest weighted sum."""
        return [
            logprobs[first] if pair is None else pair.assemble(logprobs, counted(pair.target_ids))
            for first, pair in self._pairs
        ]


def prediction_windows(call: Any, plan_items: Callable[[List[Any]], Dict[Any, int]]) -> List[int]:
    """Per prediction of ``call``, the most windows of its items (1 within the limit).

    ``call.options["_windows"]`` holds the items this process scored (filled while scoring);
    ``plan_items(items)`` gives the others' (another process scored them under sharding), planned
    again without scoring.
    """
    items, owner = call.items, call.owner  # with their document context, as they were scored
    known = call.options.setdefault("_windows", {})
    missing = list(dict.fromkeys(item for item in items if item not in known))
    if missing:
        known.update(plan_items(missing))
    out = [1] * len(call.predictions)
    for item, i in zip(items, owner):
        out[i] = max(out[i], known[item])
    return out


__all__ = ["LongText", "Plan", "Side", "pack", "prediction_windows", "sentence_starts"]
