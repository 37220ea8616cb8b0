"""Unpadded ("packed") forward of BERT-family encoders: only real tokens go through the matmuls.

Length-sorted token-budget batches of WMT sentences still carry about 8% padding (the BERTScore
benchmark, BENCHMARKS.md). The Q/K/V, output and feed-forward projections, which are ~99% of an encoder layer's
FLOPs at 25-token sentences, run here on the real tokens only, gathered into one
``(tokens, hidden)`` matrix, with Q, K and V fused into one matmul. Attention needs the sequence
structure, so it runs on the padded batch through ``scaled_dot_product_attention`` with a padding
mask. The operations are those of transformers' ``BertLayer`` in eval mode, in the same order,
so the output agrees with the model's own forward to float rounding. On CPU the projections run
through oneDNN with the GELU fused (:mod:`nlgscore.backend.gemm`), and attention over short sequences is
two batched matmuls rather than SDPA's CPU flash kernel, which is tuned for long sequences (for
25-token sentences and 32-wide heads the matmuls took 35% less time).

>>> import torch
>>> from transformers import BertConfig, BertModel
>>> model = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=50)).eval()
>>> ids, mask = torch.tensor([[2, 5, 7, 3], [2, 9, 3, 0]]), torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
>>> with torch.inference_mode():
...     diff = (PackedEncoder.build(model)(ids, mask) - model(input_ids=ids, attention_mask=mask)[0] * mask[..., None]).abs().max()
>>> bool(diff < 1e-5)
True
"""

from __future__ import annotations

import logging
from typing import Any, List, Optional, Sequence, Tuple

from nlgscore.backend.gemm import FUSED_ACTIVATIONS, bucketed_rows, linear, model_kernel, row_segments

logger = logging.getLogger(__name__)

# Architectures whose layers are transformers' BertLayer (or a copy of it) after absolute
# position embeddings; others (DeBERTa, DistilBERT, pre-LayerNorm, relative positions) keep the
# model's own forward.
SUPPORTED_MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "camembert", "data2vec-text")
# Longest padded sequence for which CPU attention uses batched matmuls; beyond it SDPA's flash
# kernel, which does not materialise the (length x length) scores, is the better choice.
BMM_ATTENTION_MAX_LENGTH = 128


class PackedEncoder:
    """Callable ``(input_ids, mask) -> (B, T, H)`` last hidden state, zero on padding."""

    def __init__(self, model: Any, layers: List[Tuple[Any, ...]], heads: int, activation: Optional[str] = None) -> None:
        self.model = model
        self.layers = layers
        self.heads = heads
        self.activation = activation  # fused into the up-projection; None: the model's own function

    @classmethod
    def build(cls, model: Any) -> Optional["PackedEncoder"]:
        """A packed forward for ``model``, or None when its layers do not have the BERT layout."""
        import torch

        config = model.config
        if (
            config.model_type not in SUPPORTED_MODEL_TYPES
            or getattr(config, "position_embedding_type", "absolute") != "absolute"
            or getattr(config, "is_decoder", False)
            or getattr(config, "add_cross_attention", False)
            or getattr(model, "embeddings", None) is None
        ):
            return None
        act = getattr(config, "hidden_act", None)
        fused = act if isinstance(act, str) and act in FUSED_ACTIVATIONS else None
        layers = []
        try:
            for layer in model.encoder.layer:
                attention = layer.attention.self
                qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])
                qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])
                out, up, down = layer.attention.output.dense, layer.intermediate.dense, layer.output.dense
                layers.append(
                    (
                        qkv_weight,
                        qkv_bias,
                        out.weight,
                        out.bias,
                        layer.attention.output.LayerNorm,
                        up.weight,
                        up.bias,
                        None if fused else layer.intermediate.intermediate_act_fn,
                        down.weight,
                        down.bias,
                        layer.output.LayerNorm,
                    )
                )
        except AttributeError as err:  # a look-alike with another layout
            logger.info("packed forward unavailable for %s: %s", type(model).__name__, err)
            return None
        return cls(model, layers, config.num_attention_heads, fused)

    def __call__(self, input_ids: Any, mask: Any) -> Any:
        return self.forward_groups([(input_ids, mask)])[0]

    def forward_groups(self, groups: Sequence[Tuple[Any, Any]], keep: Any = None) -> List[Any]:
        """The last hidden state of each ``(input_ids, mask)`` group, in one forward.

        The projections run once per layer over the real tokens of every group together (a row's
        bits do not depend on the others in its product, :mod:`nlgscore.backend.gemm`); attention
        runs per group at the group's own padded length. A batch of texts of several padded
        lengths (:func:`nlgscore.backend.batching.length_groups`) thus costs one forward, with
        the bits each group gets alone (one forward per group cost 21 forwards instead
        of 15 on the BERTScore benchmark's WMT19 kk-en pairs, and padded rows each). ``keep``: the flat positions of the
        real tokens, groups one after another, if the caller found them on the host (on a GPU,
        finding them here would wait for the device).
        """
        import torch

        hiddens = [self.model.embeddings(input_ids=ids) for ids, _ in groups]
        if not self.layers:  # num_layers=0: the embeddings output, bert_score's hidden_states[0]
            return [h.masked_fill(~mask.bool()[..., None], 0.0) for h, (_, mask) in zip(hiddens, groups)]
        width = hiddens[0].shape[-1]
        shapes = [tuple(ids.shape) for ids, _ in groups]
        sizes = [batch * length for batch, length in shapes]
        cells = sum(sizes)
        if keep is None:  # flat positions of the real tokens, groups one after another
            flat_mask = (
                torch.cat([mask.reshape(-1) for _, mask in groups]) if len(groups) > 1 else groups[0][1].reshape(-1)
            )
            keep = flat_mask.nonzero().squeeze(1)
        real = keep.numel()
        # The token matrix gets the row count gemm.linear would pad every product to; the extra
        # rows repeat the first token (finite values) and write their Q/K/V to a spare last row of
        # the buffer below, outside the attention views, so they never touch a real token.
        kernel = model_kernel(self.model)  # the model's CPU kernel (its scorer's kernel=), read once per forward
        rows = bucketed_rows(real, hiddens[0], self.layers[0][0], kernel)
        read, write = keep, keep
        if rows > real:
            read = torch.cat([keep, keep[:1].expand(rows - real)])
            write = torch.cat([keep, keep.new_full((rows - real,), cells)])
        flat = (
            torch.cat([h.reshape(-1, width) for h in hiddens]) if len(hiddens) > 1 else hiddens[0].reshape(cells, width)
        )
        # The rows stay in the segments gemm.linear would cut each product into (a head of whole
        # row buckets, a tail): every row-wise step runs per segment, so no product's two outputs
        # are ever joined by a copy. Same products, same bits; runs of 64 pairs.
        segments = row_segments(rows, flat, self.layers[0][0], kernel)
        xs = [flat.index_select(0, read[a:b]) for a, b in segments]
        device, dtype = hiddens[0].device, hiddens[0].dtype
        attends = [_attention_function(mask, self.heads, device, dtype) for _, mask in groups]
        # One zeroed buffer per batch: every layer overwrites the real rows, padding rows stay 0
        # (uninitialised padding could hold NaN, and 0 attention weight x NaN is NaN). Each group
        # has its own contiguous region, viewed as (batch, length, 3, heads, head size).
        padded = flat.new_zeros(cells + 1, 3 * width)
        views, start = [], 0
        for (batch, length), size in zip(shapes, sizes):
            views.append(padded[start : start + size].view(batch, length, 3, self.heads, width // self.heads))
            start += size
        for qkv_w, qkv_b, out_w, out_b, out_norm, up_w, up_b, act, down_w, down_b, norm in self.layers:
            for (a, b), x in zip(segments, xs):
                padded.index_copy_(0, write[a:b], linear(x, qkv_w, qkv_b, kernel=kernel))
            contexts = []
            for view, attend in zip(views, attends):
                q, k, v = view.permute(2, 0, 3, 1, 4)
                contexts.append(attend(q, k, v).transpose(1, 2).reshape(-1, width))
            context = torch.cat(contexts) if len(contexts) > 1 else contexts[0]
            for i, ((a, b), x) in enumerate(zip(segments, xs)):
                x = out_norm(linear(context.index_select(0, read[a:b]), out_w, out_b, kernel=kernel) + x)
                inner = (
                    linear(x, up_w, up_b, self.activation, kernel)
                    if act is None
                    else act(linear(x, up_w, up_b, kernel=kernel))
                )
                xs[i] = norm(linear(inner, down_w, down_b, kernel=kernel) + x)
        out = flat.new_zeros(cells, width)
        for (a, b), x in zip(segments, xs):
            if a < real:  # the rows past `real` are padding
                out.index_copy_(0, keep[a : min(b, real)], x[: min(b, real) - a])
        return [part.view(batch, length, width) for part, (batch, length) in zip(out.split(sizes), shapes)]


def _attention_function(mask: Any, heads: int, device: Any, dtype: Any) -> Any:
    """``(q, k, v) -> context`` over ``(B, heads, T, d)`` tensors of ``dtype``, padding keys masked out."""
    import torch
    import torch.nn.functional as F

    batch, length = mask.shape
    keys = mask.bool()
    if device.type != "cpu" or length > BMM_ATTENTION_MAX_LENGTH:
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=keys[:, None, None, :])
    # Additive mask, one row per (sequence, head), broadcast over the query rows by baddbmm; in the
    # model's dtype (baddbmm refuses mixed dtypes; -inf and 0 are exact in bf16/fp16).
    bias = torch.zeros(batch, 1, 1, length, device=device, dtype=dtype).masked_fill_(
        ~keys[:, None, None, :], float("-inf")
    )
    bias = bias.expand(batch, heads, length, length).reshape(batch * heads, length, length)

    def attend(q: Any, k: Any, v: Any) -> Any:
        d = q.shape[-1]
        flat = (batch * heads, length, d)
        scores = torch.baddbmm(bias, q.reshape(flat), k.reshape(flat).transpose(1, 2), alpha=d**-0.5)
        return torch.bmm(torch.softmax(scores, dim=-1), v.reshape(flat)).view(batch, heads, length, d)

    return attend
