"""Greedy matching of every candidate against every reference of a chunk at once (utility matrices).

When a chunk's pairs cover most of the product of its candidate and reference texts (a utility
matrix for MBR decoding, reranking, consensus), scoring pair by pair builds one padded block per
pair and gathers every text's embeddings once per pair it is in. Here the token embeddings of
all candidate texts of a tile meet those of all reference texts in **one matmul**; each token's
best match in each text of the other side is a masked max over that text's span, and the
per-text sums are segment sums. Same arithmetic as :func:`~nlgscore.bertscore.matching.greedy_match`
(padding excluded from the max, weights normalised per text, then summed; special tokens take part
in the max but weigh 0; F = 2PR/(P+R); a side weighing 0 scores 0), summed in the same order: the
scores have the same bits (the token axes padded as there; see nlgscore.bertscore.matching).

>>> import torch
>>> emb = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), dim=-1)
>>> spans = [(0, 2), (2, 1)]  # text 0 = tokens 0-1, text 1 = token 2
>>> p, r, f = grid_match(emb, torch.ones(3), spans, spans)
>>> [round(float(x), 4) for x in p[0]], [round(float(x), 4) for x in r[0]]
([1.0, 0.7071], [1.0, 0.7071])
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from nlgscore.backend.batching import round_up_length, token_sum
from nlgscore.backend.product_rows import MIN_ROWS
from nlgscore.backend.transfer import to_device

# Tokens per side of one tile: a tile's similarity block is at most TILE_TOKENS^2 fp32 values
# (16 MiB), its padded gathers about as much again.
TILE_TOKENS = 2048
# Fraction of the candidate x reference product a chunk's pairs must cover for the grid to pay.
MIN_DENSITY = 0.5


def dense(pairs: Sequence[Tuple[int, int]]) -> bool:
    """Whether ``pairs`` cover at least :data:`MIN_DENSITY` of their texts' product (and are many).

    >>> dense([(0, 2), (0, 3), (1, 2), (1, 3)]), dense([(0, 2), (1, 3), (4, 5), (6, 7)])
    (True, False)
    """
    hyps = {h for h, _ in pairs}
    refs = {r for _, r in pairs}
    return len(pairs) >= 4 and len(set(pairs)) >= MIN_DENSITY * len(hyps) * len(refs)


def grid_match(
    flat: Any, token_weights: Any, hyp_spans: List[Tuple[int, int]], ref_spans: List[Tuple[int, int]]
) -> Tuple[Any, Any, Any]:
    """P, R, F of every (hyp text, ref text): three ``(len(hyp_spans), len(ref_spans))`` tensors.

    ``flat``: ``(tokens, D)`` L2-normalised token embeddings; ``token_weights``: ``(tokens,)``;
    a span is ``(start, length)`` in ``flat``.
    """
    import torch

    # Texts of similar length share a tile, so its padded gathers waste little on padding.
    hyp_order = sorted(range(len(hyp_spans)), key=lambda k: hyp_spans[k][1])
    ref_order = sorted(range(len(ref_spans)), key=lambda k: ref_spans[k][1])
    hyp_sorted, ref_sorted = [hyp_spans[k] for k in hyp_order], [ref_spans[k] for k in ref_order]
    p = flat.new_zeros((len(hyp_spans), len(ref_spans)), dtype=torch.float32)
    r = torch.zeros_like(p)
    for h0, h1 in _tiles(hyp_sorted):
        hyp = _Side(hyp_sorted[h0:h1], flat, token_weights)
        for r0, r1 in _tiles(ref_sorted):
            ref = _Side(ref_sorted[r0:r1], flat, token_weights)
            # two matmuls rather than one and its transpose: each side's gathers read contiguous rows
            p[h0:h1, r0:r1] = hyp.weighted_sums(ref.segment_max(hyp.emb @ ref.emb.T))
            r[h0:h1, r0:r1] = ref.weighted_sums(hyp.segment_max(ref.emb @ hyp.emb.T)).T
    back_h, back_r = torch.tensor(hyp_order).argsort(), torch.tensor(ref_order).argsort()
    p, r = p[back_h][:, back_r], r[back_h][:, back_r]
    f = 2 * p * r / (p + r)
    return p, r, f


class _Side:
    """The texts of one side of a tile: their token embeddings, and a ``(texts, longest)`` index
    into their rows whose padding repeats the text's first token (harmless in a max, weighted 0
    in a sum), so no mask has to be applied to the similarity blocks."""

    def __init__(self, spans: List[Tuple[int, int]], flat: Any, token_weights: Any) -> None:
        import torch

        device = flat.device
        # Index tensors are built on the host and queued to the device (one copy each, no wait).
        lengths = to_device(torch.tensor([n for _, n in spans]), device)
        starts = to_device(torch.tensor([start for start, _ in spans]), device)
        rows = to_device(torch.tensor([row for start, n in spans for row in range(start, start + n)]), device)
        self.emb = flat[rows]
        if self.emb.shape[0] < MIN_ROWS:  # a product of fewer rows takes another kernel path (nlgscore.backend.gemm)
            self.emb = torch.cat([self.emb, self.emb.new_zeros(MIN_ROWS - self.emb.shape[0], self.emb.shape[1])])
        local = torch.cumsum(lengths, 0) - lengths  # each text's first row in self.emb
        # padded as greedy_match's token axes (round_up_length): the sums below add in its order
        positions = torch.arange(round_up_length(max(n for _, n in spans)), device=device)
        valid = positions[None, :] < lengths[:, None]
        self.index = torch.where(valid, local[:, None] + positions[None, :], local[:, None])
        weights = token_weights[torch.where(valid, starts[:, None] + positions[None, :], starts[:, None])].to(
            torch.float32
        )
        weights = weights.masked_fill(~valid, 0.0)
        # normalised per text first, then summed (greedy_match's order); a text weighing 0 gives
        # NaN, which the caller turns into 0
        self.scale = weights / token_sum(weights, dim=1, keepdim=True)

    def segment_max(self, sim: Any) -> Any:
        """``sim``'s columns are this side's tokens: each row's best match in each text, ``(rows, texts)``."""
        return sim[:, self.index.reshape(-1)].view(sim.shape[0], *self.index.shape).amax(dim=-1)

    def weighted_sums(self, best: Any) -> Any:
        """``best``'s rows are this side's tokens: per text, its tokens' best values weighted, ``(texts, cols)``
        (summed along a contiguous token axis, as greedy_match sums)."""
        import torch

        return token_sum(best.to(torch.float32).T.contiguous()[:, self.index] * self.scale).T


def _tiles(spans: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Consecutive runs of texts of at most :data:`TILE_TOKENS` tokens (a longer text alone)."""
    tiles, start, used = [], 0, 0
    for k, (_, n) in enumerate(spans):
        if k > start and used + n > TILE_TOKENS:
            tiles.append((start, k))
            start, used = k, 0
        used += n
    if spans:
        tiles.append((start, len(spans)))
    return tiles
