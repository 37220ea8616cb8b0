"""Overlapping windows for texts longer than the encoder's limit (``long_inputs="auto"``).

A text of ``n`` content tokens (special tokens excluded) and a window of ``room`` content tokens
is cut as BERT's reading-comprehension code (``run_squad.py``, doc spans) cuts a document: a
window starts at 0, the next ``stride`` tokens later, until one reaches the end. Each window is
encoded with the model's special tokens around it, as a sentence of its own. Each content token
then takes its embedding from the window where it has **the most context**: the largest
``min(tokens left of it, tokens right of it) + 0.01 * window length``, the first such window on
ties (``_check_is_max_context``). In a causal (decoder-only) model a token never sees its right
context, so there it takes the window where it has the most *left* context. The prefix tokens (``[CLS]``) come from the first window and the
suffix tokens (``[SEP]``) from the last, so the whole text has exactly the rows of its untruncated
token ids, and matching and idf run over all of them.

A text within the limit is one window equal to the text: nothing changes (bit-identical to
truncation). With the default stride of half a window, the encoder runs on about twice the
text's tokens (at most ``2 + 2 * specials / room`` times).

>>> window_spans(10, room=4, stride=2)
[(0, 4), (2, 6), (4, 8), (6, 10)]
>>> best_window(window_spans(10, room=4, stride=2), 10).tolist()
[0, 0, 0, 1, 1, 2, 2, 3, 3, 3]
>>> plan = WindowPlan([101, 7, 8, 9, 10, 11, 102], prefix=1, suffix=1, room=3, stride=2)
>>> plan.windows
[[101, 7, 8, 9, 102], [101, 9, 10, 11, 102]]
>>> plan.rows.tolist()  # per row of the text: its row in the windows' rows laid end to end
[0, 1, 2, 3, 7, 8, 9]
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from nlgscore.errors import ArgumentError

# run_squad's tie-break: a longer window wins between equal context counts.
WINDOW_LENGTH_BONUS = 0.01


def default_stride(room: int) -> int:
    """Half a window (at least 1 token): every token is at least a quarter window from an edge
    of the window it is taken from, unless it lies in the text's first or last quarter window."""
    return max(1, room // 2)


def check_stride(stride: Optional[int], room: int) -> int:
    """``stride`` (None: :func:`default_stride`) checked against the window of ``room`` content tokens."""
    if stride is None:
        return default_stride(room)
    if isinstance(stride, bool) or not isinstance(stride, int):
        raise ArgumentError(f"window_stride must be a positive int or None, got {type(stride).__name__}: {stride!r}")
    if not 1 <= stride <= room:
        raise ArgumentError(f"window_stride must be between 1 and the window's {room} content tokens, got {stride}")
    return stride


def window_spans(n: int, room: int, stride: int) -> List[Tuple[int, int]]:
    """``(start, stop)`` of each window over ``n`` content tokens (one ``(0, n)`` window when ``n <= room``).

    Each window advances by at least one token, so there are at most ``n`` of them.

    >>> window_spans(3, room=0, stride=1)
    Traceback (most recent call last):
    ...
    ValueError: a window needs room >= 1 and stride >= 1 to advance, got room=0, stride=1
    """
    if room < 1 or stride < 1:
        raise ValueError(f"a window needs room >= 1 and stride >= 1 to advance, got room={room}, stride={stride}")
    spans = []
    start = 0
    while True:
        stop = min(n, start + room)
        spans.append((start, stop))
        if stop >= n:
            return spans
        start += min(stop - start, stride)


def best_window(spans: Sequence[Tuple[int, int]], n: int, causal: bool = False) -> np.ndarray:
    """For each of the ``n`` content tokens, the window where it has the most context (``causal``:
    the most left context).

    >>> best_window(window_spans(10, room=4, stride=2), 10, causal=True).tolist()
    [0, 0, 0, 0, 1, 1, 2, 2, 3, 3]
    """
    best = np.full(n, -1.0)
    owner = np.zeros(n, dtype=np.int64)
    for w, (start, stop) in enumerate(spans):
        positions = np.arange(start, stop)
        right = positions - start if causal else stop - 1 - positions
        score = np.minimum(positions - start, right) + WINDOW_LENGTH_BONUS * (stop - start)
        better = score > best[start:stop]  # strictly: the first window wins a tie
        best[start:stop][better] = score[better]
        owner[start:stop][better] = w
    return owner


class WindowPlan:
    """The windows of one text's token ids and where each row of the text comes from.

    ``ids`` are the text's full token ids, ``prefix``/``suffix`` special tokens around ``n``
    content tokens. ``windows`` are token-id lists to encode; ``rows[k]`` is the row of the
    text's token ``k`` in the windows' encoder rows concatenated in order.
    """

    def __init__(
        self, ids: Sequence[int], prefix: int, suffix: int, room: int, stride: int, causal: bool = False
    ) -> None:
        ids = list(ids)
        head, content, tail = ids[:prefix], ids[prefix : len(ids) - suffix], ids[len(ids) - suffix :]
        n = len(content)
        self.spans = window_spans(n, room, stride)
        self.windows = [head + content[start:stop] + tail for start, stop in self.spans]
        offsets = np.cumsum([0] + [len(w) for w in self.windows])
        owner = best_window(self.spans, n, causal)
        starts = np.array([start for start, _ in self.spans], dtype=np.int64)
        content_rows = offsets[owner] + prefix + np.arange(n) - starts[owner]
        last = len(self.windows) - 1
        self.offsets = offsets
        self.rows = np.concatenate(
            [
                np.arange(prefix),  # the first window's prefix
                content_rows,
                offsets[last]
                + prefix
                + (self.spans[last][1] - self.spans[last][0])
                + np.arange(suffix),  # the last window's suffix
            ]
        ).astype(np.int64)

    def __len__(self) -> int:
        return len(self.windows)

    def place(self, out: Any, window: int, encoded: Any) -> Any:
        """Copy into ``out`` (the text's ``(..., tokens, D)`` embeddings; allocated here when None)
        the rows that window ``window`` owns, from its ``encoded`` rows; return ``out``.

        Windows are placed as their encoder batches finish, so a long text never holds more than
        its own embeddings and one batch (not all its windows at once).
        """
        import torch

        if out is None:
            out = encoded.new_zeros(encoded.shape[:-2] + (len(self.rows), encoded.shape[-1]))
        start, stop = self.offsets[window], self.offsets[window + 1]
        dest = np.flatnonzero((self.rows >= start) & (self.rows < stop))
        index = torch.as_tensor(self.rows[dest] - start, device=encoded.device)
        out.index_copy_(
            out.dim() - 2, torch.as_tensor(dest, device=encoded.device), encoded.index_select(encoded.dim() - 2, index)
        )
        return out

    def assemble(self, encoded: Sequence[Any]) -> Any:
        """The text's embeddings ``(..., tokens, D)`` from its windows' ``encoded`` rows (in order)."""
        if len(encoded) == 1:
            return encoded[0]
        out = None
        for window, rows in enumerate(encoded):
            out = self.place(out, window, rows)
        return out
