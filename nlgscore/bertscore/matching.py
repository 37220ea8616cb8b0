"""Greedy cosine matching of padded, L2-normalised token embeddings: BERTScore P, R and F.

One batched matmul gives every pair's similarity matrix; each candidate token takes its best
reference token (precision) and each reference token its best candidate token (recall), weighted
by token weights normalised per sentence. Padding is excluded from the max (not set to 0 as in
bert_score 0.3.13, where a padded cell could win over all-negative cosines and make a score depend
on the batch it was in); special tokens take part in the max but weigh 0.

>>> import torch
>>> e = torch.nn.functional.normalize(torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]), dim=-1)
>>> w = torch.tensor([[1.0, 1.0]]); m = torch.tensor([[True, True]])
>>> [round(float(x), 4) for x in greedy_match(e, m, w, e, m, w)]
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import Tuple


def greedy_match(hyp_emb, hyp_mask, hyp_w, ref_emb, ref_mask, ref_w) -> Tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]:  # noqa: F821
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
    hyp_scale = hyp_w / hyp_w.sum(dim=1, keepdim=True)
    ref_scale = ref_w / ref_w.sum(dim=1, keepdim=True)
    precision = (best_for_hyp.masked_fill(~hyp_mask, 0.0) * hyp_scale).sum(dim=-1)
    recall = (best_for_ref.masked_fill(~ref_mask, 0.0) * ref_scale).sum(dim=-1)
    f1 = 2 * precision * recall / (precision + recall)
    return precision, recall, f1
