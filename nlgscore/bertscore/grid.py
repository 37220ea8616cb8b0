"""Greedy matching of every candidate against every reference of a chunk at once (utility matrices).

When a chunk's pairs cover most of the product of its candidate and reference texts (a utility
matrix for MBR decoding, reranking, consensus), scoring pair by pair builds one padded block per
pair and gathers every text's embeddings once per pair it is in. Here the token embeddings of
all candidate texts of a tile meet those of all reference texts in **one matmul**; each token's
best match in each text of the other side is a masked max over that text's span, and the
per-text sums are segment sums. Same arithmetic as :func:`~nlgscore.bertscore.matching.greedy_match`
(padding excluded from the max, weights normalised per text, then summed; special tokens take part
in the max but weigh 0; F = 2PR/(P+R); a side weighing 0 scores 0), summed in another order: the
scores agree to float rounding (~1e-7).

>>> import torch
>>> emb = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), dim=-1)
>>> spans = [(0, 2), (2, 1)]  # text 0 = tokens 0-1, text 1 = token 2
>>> p, r, f = grid_match(emb, torch.ones(3), spans, spans)
>>> [round(float(x), 4) for x in p[0]], [round(float(x), 4) for x in r[0]]
([1.0, 0.7071], [1.0, 0.7071])
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

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


def grid_match(flat: Any, token_weights: Any, hyp_spans: List[Tuple[int, int]], ref_spans: List[Tuple[int, int]]) -> Tuple[Any, Any, Any]:
    """P, R, F of every (hyp text, ref text): three ``(len(hyp_spans), len(ref_spans))`` tensors.

    ``flat``: ``(tokens, D)`` L2-normalised token embeddings; ``token_weights``: ``(tokens,)``;
    a span is ``(start, length)`` in ``flat``.
    """
    import torch

    p = flat.new_zeros((len(hyp_spans), len(ref_spans)), dtype=torch.float32)
    r = torch.zeros_like(p)
    for h0, h1 in _tiles(hyp_spans):
        for r0, r1 in _tiles(ref_spans):
            hyp, ref = hyp_spans[h0:h1], ref_spans[r0:r1]
            hyp_rows, hyp_owner = _rows(hyp, flat.device)
            ref_rows, ref_owner = _rows(ref, flat.device)
            sim = flat[hyp_rows] @ flat[ref_rows].T  # (hyp tokens, ref tokens)
            best_for_hyp = _segment_max(sim, ref, flat.device)  # (hyp tokens, ref texts)
            best_for_ref = _segment_max(sim.T, hyp, flat.device)  # (ref tokens, hyp texts)
            p[h0:h1, r0:r1] = _weighted_sums(best_for_hyp, token_weights[hyp_rows], hyp_owner, len(hyp))
            r[h0:h1, r0:r1] = _weighted_sums(best_for_ref, token_weights[ref_rows], ref_owner, len(ref)).T
    f = 2 * p * r / (p + r)
    return p, r, f


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


def _rows(spans: List[Tuple[int, int]], device: Any) -> Tuple[Any, Any]:
    """The flat rows of ``spans``' tokens, and the index of the text each row belongs to."""
    import torch

    rows = torch.cat([torch.arange(start, start + n, device=device) for start, n in spans])
    owner = torch.repeat_interleave(torch.arange(len(spans), device=device), torch.tensor([n for _, n in spans], device=device))
    return rows, owner


def _segment_max(sim: Any, spans: List[Tuple[int, int]], device: Any) -> Any:
    """For each row of ``sim`` (columns = the tokens of ``spans``, in order), its max over each span."""
    import torch

    lengths = torch.tensor([n for _, n in spans], device=device)
    starts = torch.cumsum(lengths, 0) - lengths
    positions = torch.arange(int(lengths.max()), device=device)
    valid = positions[None, :] < lengths[:, None]  # (texts, longest)
    index = torch.where(valid, starts[:, None] + positions[None, :], 0)
    gathered = sim[:, index.reshape(-1)].view(sim.shape[0], len(spans), -1)
    return gathered.masked_fill(~valid, torch.finfo(sim.dtype).min).amax(dim=-1)


def _weighted_sums(best: Any, weights: Any, owner: Any, texts: int) -> Any:
    """Per text of the rows' side: sum of its rows' ``best`` times its normalised weights."""
    import torch

    weights = weights.to(torch.float32)
    total = torch.zeros(texts, dtype=weights.dtype, device=weights.device).index_add_(0, owner, weights)
    scale = weights / total[owner]  # a text weighing 0 gives NaN here, 0 after the caller's nan_to_num
    out = torch.zeros((texts, best.shape[1]), dtype=torch.float32, device=best.device)
    return out.index_add_(0, owner, best.to(torch.float32) * scale[:, None])
