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
from ``MIN_ROWS`` rows up): the attention and products of
:mod:`nlgscore.backend.packed_attention`, which the seq2seq engine's token forward shares. So a
text's hidden state has the same bits alone or packed with any others, and on CUDA in any token
count.

``forward="tokens"`` makes a BERTScore encoder use it (``forward="auto"``, the default, where
``NLGSCORE_TOKEN_FORWARD=1``; the signature then records ``forward:tokens``); off by default: on
CPU the grouped attention of the packed forward is faster, and on CUDA it is used once the GPU
check has measured it (BENCHMARKS.md "GPU").

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

from typing import Any, Dict, List, Optional, Sequence, Tuple

from nlgscore.backend.gemm import model_kernel

# The pieces every token forward shares live in the backend (the seq2seq engine has one too);
# they are re-exported here, where BERTScore's callers and tests have always found them.
from nlgscore.backend.packed_attention import (
    CUDA_ROW_TILE,
    ENV_SWITCH,
    cu_seqlens,
    enabled,
    packed_linear,
    tiled_linear,
    varlen_attention,
    varlen_kernel,
)
from nlgscore.backend.transfer import to_device
from nlgscore.bertscore.cuda_graphs import (
    DEFAULT_MAX_GRAPHS,
    CapturedForward,
    GraphCache,
    bucket_for,
    graph_plan,
    slots,
)
from nlgscore.bertscore.cuda_graphs import enabled as graphs_enabled

__all__ = ["TokenForward", "ENV_SWITCH", "CUDA_ROW_TILE", "enabled", "cu_seqlens", "varlen_attention", "tiled_linear"]


class TokenForward:
    """The last hidden state of packed tokens: ``run(ids, positions, lengths) -> (tokens, hidden)``,
    with the weights of a :class:`~nlgscore.bertscore.packed_encoder.PackedEncoder`."""

    def __init__(self, packed: Any, max_len: int = 512, max_graphs: int = DEFAULT_MAX_GRAPHS) -> None:
        self.model, self.layers, self.heads, self.activation = (
            packed.model,
            packed.layers,
            packed.heads,
            packed.activation,
        )
        self.max_len = max_len  # the longest sequence the model takes (its position table)
        # CUDA graphs by token bucket, made on first use (CUDA, 16-bit: where attention is one varlen call).
        self.graphs = GraphCache(self._capture, max_graphs)
        self._device: Any = None
        self._kernel: Optional[str] = None

    def positions(self, input_ids: Any, mask: Any) -> Any:
        """The position ids the model's own forward gives a padded ``(batch, length)`` input (BERT
        counts from 0; RoBERTa from its padding index + 1), computed on the host."""
        import torch

        embeddings = self.model.embeddings
        if hasattr(embeddings, "create_position_ids_from_input_ids"):
            return embeddings.create_position_ids_from_input_ids(input_ids, embeddings.padding_idx)
        return torch.arange(input_ids.shape[1]).expand_as(input_ids)

    def _linear(self, x: Any, weight: Any, bias: Any, activation: Any = None) -> Any:
        return packed_linear(x, weight, bias, activation, self._kernel)

    def run(
        self, ids: Any, positions: Any, lengths: Sequence[int], cu: Any = None, longest: Optional[int] = None
    ) -> Any:
        """Hidden states of the tokens ``ids`` (1-D, sequences one after another, on the model's
        device) at ``positions``, the sequences being ``lengths`` tokens long (``cu`` and
        ``longest`` as :func:`varlen_attention` takes them: given by a graph's static inputs)."""
        import torch

        self._kernel = model_kernel(self.model)  # the model's CPU kernel (its scorer's kernel=), once per forward
        tokens = ids.shape[0]
        types = torch.zeros_like(ids)[None]
        x = self.model.embeddings(input_ids=ids[None], position_ids=positions[None], token_type_ids=types)[0]
        if cu is None and varlen_kernel(x):
            cu = to_device(torch.tensor(cu_seqlens(lengths), dtype=torch.int32), x.device)
        width = x.shape[-1]
        for qkv_w, qkv_b, out_w, out_b, out_norm, up_w, up_b, act, down_w, down_b, norm in self.layers:
            q, k, v = self._linear(x, qkv_w, qkv_b).view(tokens, 3, self.heads, width // self.heads).unbind(1)
            context = varlen_attention(q, k, v, lengths, cu, longest).reshape(tokens, width)
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
        hidden = self.replayed(ids, positions, lengths, device)
        if hidden is None:
            hidden = self.run(to_device(ids, device), to_device(positions, device), lengths)
        shapes = [tuple(g.shape) for g, _ in host]
        sizes = [batch * length for batch, length in shapes]
        out = hidden.new_zeros(sum(sizes), hidden.shape[-1])
        out.index_copy_(0, to_device(keep, device), hidden)
        return [part.view(batch, length, -1) for part, (batch, length) in zip(out.split(sizes), shapes)]

    # -- CUDA graphs ---------------------------------------------------------------------------
    def uses_graphs(self, device: Any, dtype: Any) -> bool:
        """Whether batches on ``device`` in ``dtype`` run by a bucket's graph (CUDA, 16-bit,
        ``NLGSCORE_CUDA_GRAPHS`` not 0)."""
        import torch

        return (
            getattr(device, "type", device) == "cuda" and dtype in (torch.bfloat16, torch.float16) and graphs_enabled()
        )

    def filler(self) -> Dict[str, int]:
        """The id and position of the tokens that pad a batch to its bucket (a one-token sequence's)."""
        import torch

        one = torch.zeros(1, 1, dtype=torch.long)
        return {"id": 0, "position": int(self.positions(one, torch.ones_like(one))[0, 0])}

    def layout(self, ids: Any, positions: Any, lengths: Sequence[int]) -> Optional[Tuple[Any, Any, Any, Any]]:
        """The host inputs of a bucket's graph for this batch: ``(plan, ids, positions, cu)``
        padded to the bucket with filler sequences; None where no bucket takes it."""
        import torch

        bucket = bucket_for(sum(lengths))
        plan = None if bucket is None else graph_plan(lengths, bucket, self.max_len, slots(bucket, self.max_len))
        if plan is None:
            return None
        filler = self.filler()
        full_ids = torch.full((plan.bucket,), filler["id"], dtype=torch.long)
        full_positions = torch.full((plan.bucket,), filler["position"], dtype=torch.long)
        full_ids[: plan.tokens], full_positions[: plan.tokens] = ids, positions
        # The filler sequences count positions as real ones do (each from its first), so none
        # reads past the position table.
        start = plan.tokens
        for n in plan.lengths[len(lengths) :]:
            if n:
                full_positions[start : start + n] += torch.arange(n)
            start += n
        return plan, full_ids, full_positions, torch.tensor(plan.cu, dtype=torch.int32)

    def replayed(self, ids: Any, positions: Any, lengths: Sequence[int], device: Any) -> Any:
        """The batch's hidden states by its bucket's CUDA graph; None where graphs are not used."""
        dtype = self.layers[0][0].dtype if self.layers else None
        if not self.layers or not self.uses_graphs(device, dtype):
            return None
        laid = self.layout(ids, positions, lengths)
        if laid is None:
            return None
        plan, full_ids, full_positions, cu = laid
        self._device = device
        captured = self.graphs.get(plan.bucket)
        hidden = captured.replay(
            to_device(full_ids, device), to_device(full_positions, device), to_device(cu, device), plan.tokens
        )
        return hidden.clone()  # the graph's output is overwritten by its next replay

    def _capture(self, bucket: int) -> Any:
        return CapturedForward(self, bucket, slots(bucket, self.max_len), self.max_len, self._device, self.filler())
