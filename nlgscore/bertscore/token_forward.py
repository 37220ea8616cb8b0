"""The token forward: a BERT-family encoder over packed tokens, attention per sequence.

The packed forward (:mod:`nlgscore.bertscore.packed_encoder`) runs the projections on real tokens
only but attention on padded length groups, so a batch still costs one attention call per group
and its shapes change with every batch. Here every layer runs on one ``(tokens, hidden)`` matrix:
the texts' tokens one after another, each sequence attending only to itself, as vLLM and TEI run
encoders (``cu_seqlens``: the first token of every sequence, and the end). On CUDA in bfloat16 or
float16 the attention is PyTorch's flash-attention varlen kernel
(``torch.nn.attention.varlen.varlen_attn``), one call per layer for the whole batch, with no
padding and no host synchronisation; elsewhere it is each sequence's own attention, one after the
other (the reference the tests hold the varlen kernel's layout to).

**Same bits in any batch.** A sequence's attention reads only its own rows, the embeddings and
LayerNorms are row-wise, and every product runs in row tiles of one shape on CUDA
(:data:`CUDA_ROW_TILE`: cuBLAS picks its kernel by the row count, so tiles of one shape get one
kernel whatever the batch) and through :func:`nlgscore.backend.gemm.linear` on CPU (row-invariant
from ``MIN_ROWS`` rows up). So a text's hidden state has the same bits alone or packed with any
others, and on CUDA in any token count.

``NLGSCORE_TOKEN_FORWARD=1`` makes a BERTScore encoder use it (the signature then records
``forward:tokens``); off by default: on CPU the grouped attention of the packed forward is faster,
and on CUDA it is used once the GPU check has measured it (BENCHMARKS.md "GPU").

>>> import torch
>>> from transformers import BertConfig, BertModel
>>> from nlgscore.bertscore.packed_encoder import PackedEncoder
>>> model = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=50)).eval()
>>> forward = TokenForward(PackedEncoder.build(model))
>>> ids, mask = torch.tensor([[2, 5, 7, 3], [2, 9, 3, 0]]), torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
>>> with torch.inference_mode():
...     packed = forward.run(ids[mask.bool()], forward.positions(ids, mask)[mask.bool()], [4, 3])
...     padded = model(input_ids=ids, attention_mask=mask)[0][mask.bool()]
>>> packed.shape, bool((packed - padded).abs().max() < 1e-5)
(torch.Size([7, 32]), True)
"""

from __future__ import annotations

import os
from typing import Any, List, Sequence, Tuple

from nlgscore.backend.gemm import linear
from nlgscore.backend.transfer import to_device

__all__ = ["TokenForward", "ENV_SWITCH", "CUDA_ROW_TILE", "enabled", "cu_seqlens", "varlen_attention", "tiled_linear"]

ENV_SWITCH = "NLGSCORE_TOKEN_FORWARD"
# Rows of every CUDA product tile: one shape for every product of a weight, so one cuBLAS kernel
# (and one set of bits per row) whatever the batch's token count; 128 is a multiple of every
# tensor-core tile height.
CUDA_ROW_TILE = 128


def enabled() -> bool:
    """Whether ``NLGSCORE_TOKEN_FORWARD=1`` asks BERTScore encoders for the token forward."""
    return os.environ.get(ENV_SWITCH, "").strip() == "1"


def cu_seqlens(lengths: Sequence[int]) -> List[int]:
    """The first token of every sequence, then the end (flash-attention's ``cu_seqlens``).

    >>> cu_seqlens([4, 3, 5])
    [0, 4, 7, 12]
    """
    starts = [0]
    for n in lengths:
        starts.append(starts[-1] + n)
    return starts


def varlen_attention(q: Any, k: Any, v: Any, lengths: Sequence[int], cu: Any = None) -> Any:
    """Attention of packed ``(tokens, heads, head size)`` tensors, each sequence of ``lengths``
    attending to itself only: the flash varlen kernel on CUDA in bfloat16/float16 (``cu``: the
    :func:`cu_seqlens` on the device, int32), else one attention call per sequence."""
    import torch
    import torch.nn.functional as F

    if q.is_cuda and q.dtype in (torch.bfloat16, torch.float16):
        from torch.nn.attention.varlen import varlen_attn

        longest = max(lengths)
        return varlen_attn(q, k, v, cu, cu, longest, longest)
    out = torch.empty_like(q)
    start = 0
    for n in lengths:
        part = [t[start : start + n].transpose(0, 1)[None] for t in (q, k, v)]  # (1, heads, n, d)
        out[start : start + n] = F.scaled_dot_product_attention(*part)[0].transpose(0, 1)
        start += n
    return out


def tiled_linear(x: Any, weight: Any, bias: Any = None, tile: int = CUDA_ROW_TILE) -> Any:
    """``F.linear`` of ``(rows, in)`` ``x`` in products of ``tile`` rows each (the last one padded
    with zero rows): every product of ``weight`` has one shape, so one kernel and one set of bits
    per row whatever ``rows`` is.

    >>> import torch
    >>> x, w = torch.randn(300, 8), torch.randn(4, 8)
    >>> tiled_linear(x, w).shape, bool((tiled_linear(x, w) - x @ w.T).abs().max() < 1e-5)
    (torch.Size([300, 4]), True)
    """
    import torch
    import torch.nn.functional as F

    rows = x.shape[0]
    if rows == 0:
        return F.linear(x, weight, bias)
    padded = -(-rows // tile) * tile
    if padded != rows:
        x = torch.cat([x, x.new_zeros(padded - rows, x.shape[1])])
    parts = [F.linear(x[start : start + tile], weight, bias) for start in range(0, padded, tile)]
    return torch.cat(parts)[:rows]


class TokenForward:
    """The last hidden state of packed tokens: ``run(ids, positions, lengths) -> (tokens, hidden)``,
    with the weights of a :class:`~nlgscore.bertscore.packed_encoder.PackedEncoder`."""

    def __init__(self, packed: Any) -> None:
        self.model, self.layers, self.heads, self.activation = (
            packed.model,
            packed.layers,
            packed.heads,
            packed.activation,
        )

    def positions(self, input_ids: Any, mask: Any) -> Any:
        """The position ids the model's own forward gives a padded ``(batch, length)`` input (BERT
        counts from 0; RoBERTa from its padding index + 1), computed on the host."""
        import torch

        embeddings = self.model.embeddings
        if hasattr(embeddings, "create_position_ids_from_input_ids"):
            return embeddings.create_position_ids_from_input_ids(input_ids, embeddings.padding_idx)
        return torch.arange(input_ids.shape[1]).expand_as(input_ids)

    def _linear(self, x: Any, weight: Any, bias: Any, activation: Any = None) -> Any:
        if not x.is_cuda:
            return linear(x, weight, bias, activation)
        import torch.nn.functional as F

        out = tiled_linear(x, weight, bias)
        return F.gelu(out) if activation == "gelu" else F.relu(out) if activation == "relu" else out

    def run(self, ids: Any, positions: Any, lengths: Sequence[int]) -> Any:
        """Hidden states of the tokens ``ids`` (1-D, sequences one after another, on the model's
        device) at ``positions``, the sequences being ``lengths`` tokens long."""
        import torch

        tokens = ids.shape[0]
        types = torch.zeros_like(ids)[None]
        x = self.model.embeddings(input_ids=ids[None], position_ids=positions[None], token_type_ids=types)[0]
        cu = to_device(torch.tensor(cu_seqlens(lengths), dtype=torch.int32), x.device) if x.is_cuda else None
        width = x.shape[-1]
        for qkv_w, qkv_b, out_w, out_b, out_norm, up_w, up_b, act, down_w, down_b, norm in self.layers:
            q, k, v = self._linear(x, qkv_w, qkv_b).view(tokens, 3, self.heads, width // self.heads).unbind(1)
            context = varlen_attention(q, k, v, lengths, cu).reshape(tokens, width)
            x = out_norm(self._linear(context, out_w, out_b) + x)
            inner = self._linear(x, up_w, up_b, self.activation) if act is None else act(self._linear(x, up_w, up_b))
            x = norm(self._linear(inner, down_w, down_b) + x)
        return x

    def forward_groups(self, groups: Sequence[Tuple[Any, Any]], host: Sequence[Tuple[Any, Any]]) -> List[Any]:
        """:meth:`PackedEncoder.forward_groups`'s answer (each group's ``(batch, length, hidden)``,
        zero on padding) from one token forward: ``groups`` on the device, ``host`` the same
        ``(input_ids, mask)`` on the host (where the tokens' places are found without waiting)."""
        import torch

        flat_mask = torch.cat([mask.reshape(-1) for _, mask in host]).bool()
        keep = flat_mask.nonzero().squeeze(1)
        lengths = [n for _, mask in host for n in mask.sum(1).tolist()]
        ids = torch.cat([g.reshape(-1) for g, _ in host])[keep]
        positions = torch.cat([self.positions(g, m).reshape(-1) for g, m in host])[keep]
        device = groups[0][0].device
        hidden = self.run(to_device(ids, device), to_device(positions, device), lengths)
        shapes = [tuple(g.shape) for g, _ in host]
        sizes = [batch * length for batch, length in shapes]
        out = hidden.new_zeros(sum(sizes), hidden.shape[-1])
        out.index_copy_(0, to_device(keep, device), hidden)
        return [part.view(batch, length, -1) for part, (batch, length) in zip(out.split(sizes), shapes)]
