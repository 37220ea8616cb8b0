"""Greedy cosine matching of padded, L2-normalised token embeddings: BERTScore P, R and F.

One batched matmul gives every pair's similarity matrix; each candidate token takes its best
reference token (precision) and each reference token its best candidate token (recall), weighted
by token weights normalised per sentence. Padding is excluded from the max (not set to 0 as in
bert_score 0.3.13, where a padded cell could win over all-negative cosines and make a score depend
on the batch it was in); special tokens take part in the max but weigh 0.

Batch invariance: callers pad the token axes to a multiple of
:data:`~nlgscore.backend.batching.LENGTH_MULTIPLE` (:func:`~nlgscore.backend.batching.round_up_length`).
Then every similarity comes from a product of at least 16 rows (the same bits as in any larger
product) and every per-text sum adds the text's values left to right
(:func:`~nlgscore.backend.batching.token_sum`: the zeros past a text's end never move it), so a
pair's P, R, F do not depend on its batch mates, nor on the path (:mod:`nlgscore.bertscore.grid`
sums in the same order).

>>> import torch
>>> e = torch.nn.functional.normalize(torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]), dim=-1)
>>> w = torch.tensor([[1.0, 1.0]]); m = torch.tensor([[True, True]])
>>> [round(float(x), 4) for x in greedy_match(e, m, w, e, m, w)]
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple

if TYPE_CHECKING:
    import torch

from nlgscore.backend.batching import token_sum


def greedy_match(
    hyp_emb, hyp_mask, hyp_w, ref_emb, ref_mask, ref_w
) -> Tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]:
    """P, R, F of each pair.

    ``*_emb``: ``(B, T, D)`` or ``(B, L, T, D)`` (all layers), zero-padded; ``*_mask``: ``(B, T)``
    bool; ``*_w``: ``(B, T)`` token weights (0 on padding). Returns tensors of shape ``(B,)`` or
    ``(L, B)``. A side whose weights sum to 0 gives NaN there; the caller decides what it means.
    """
    import torch

    layered = hyp_emb.dim() == 4
    if layered:  # (B, L, T, D) -> (L, B, T, D): one matmul per layer, pairs batched
        hyp_emb, ref_emb = hyp_emb.transpose(0, 1), ref_emb.transpose(0, 1)
    sim = torch.matmul(hyp_emb, ref_emb.transpose(-1, -2))  # (..., B, Th, Tr)
    neg = torch.finfo(sim.dtype).min
    best_for_hyp = sim.masked_fill(~ref_mask[:, None, :], neg).amax(dim=-1)
    best_for_ref = sim.masked_fill(~hyp_mask[:, :, None], neg).amax(dim=-2)
    # Normalise the weights first, then sum, in the reference package's order of operations.
    hyp_scale = hyp_w / token_sum(hyp_w, dim=1, keepdim=True)
    ref_scale = ref_w / token_sum(ref_w, dim=1, keepdim=True)
    precision = token_sum(best_for_hyp.masked_fill(~hyp_mask, 0.0) * hyp_scale)
    recall = token_sum(best_for_ref.masked_fill(~ref_mask, 0.0) * ref_scale)
    f1 = 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def greedy_match_blocked(
    hyp_emb, hyp_w, ref_emb, ref_w, block: int
) -> Tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]:
    """:func:`greedy_match` of ONE unpadded pair, ``block`` candidate tokens at a time, so that a
    pair of two very long texts (windowed inputs) never holds its whole similarity matrix.

    ``*_emb``: ``(T, D)`` or ``(L, T, D)``; ``*_w``: ``(T,)``. Returns scalars or ``(L,)`` tensors.
    The maxima are exact; the sums run in greedy_match's order, so the scores agree with it to
    float rounding.

    >>> import torch
    >>> e = torch.nn.functional.normalize(torch.randn(7, 4, generator=torch.Generator().manual_seed(0)), dim=-1)
    >>> f = torch.nn.functional.normalize(torch.randn(5, 4, generator=torch.Generator().manual_seed(1)), dim=-1)
    >>> w, v = torch.ones(7), torch.ones(5)
    >>> full = greedy_match(e[None], torch.ones(1, 7, dtype=torch.bool), w[None], f[None], torch.ones(1, 5, dtype=torch.bool), v[None])
    >>> blocked = greedy_match_blocked(e, w, f, v, block=2)
    >>> all(abs(float(a[0]) - float(b)) < 1e-6 for a, b in zip(full, blocked))
    True
    """
    import torch

    n = hyp_emb.shape[-2]
    best_for_hyp = []
    best_for_ref = None
    for start in range(0, n, max(1, block)):
        sim = torch.matmul(hyp_emb[..., start : start + block, :], ref_emb.transpose(-1, -2))  # (..., b, Tr)
        best_for_hyp.append(sim.amax(dim=-1))
        column_best = sim.amax(dim=-2)
        best_for_ref = column_best if best_for_ref is None else torch.maximum(best_for_ref, column_best)
    hyp_scale = hyp_w / token_sum(hyp_w)
    ref_scale = ref_w / token_sum(ref_w)
    precision = token_sum(torch.cat(best_for_hyp, dim=-1) * hyp_scale)
    recall = token_sum(best_for_ref * ref_scale)
    f1 = 2 * precision * recall / (precision + recall)
    return precision, recall, f1
