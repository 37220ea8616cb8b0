"""Unpadded ("packed") forward of BERT-family encoders: only real tokens go through the matmuls.

Length-sorted token-budget batches of WMT sentences still carry about 8% padding (issue #6
benchmark). The Q/K/V, output and feed-forward projections, which are ~99% of an encoder layer's
FLOPs at 25-token sentences, run here on the real tokens only, gathered into one
``(tokens, hidden)`` matrix, with Q, K and V fused into one matmul. Attention needs the sequence
structure, so it runs on the padded batch through ``scaled_dot_product_attention`` with a padding
mask. The operations are those of transformers' ``BertLayer`` in eval mode, in the same order,
so the output agrees with the model's own forward to float rounding.

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
from typing import Any, List, Optional, Tuple

logger = logging.getLogger(__name__)

# Architectures whose layers are transformers' BertLayer (or a copy of it) after absolute
# position embeddings; others (DeBERTa, DistilBERT, pre-LayerNorm, relative positions) keep the
# model's own forward.
SUPPORTED_MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "camembert", "data2vec-text")


class PackedEncoder:
    """Callable ``(input_ids, mask) -> (B, T, H)`` last hidden state, zero on padding."""

    def __init__(self, model: Any, layers: List[Tuple[Any, ...]], heads: int) -> None:
        self.model = model
        self.layers = layers
        self.heads = heads

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
        layers = []
        try:
            for layer in model.encoder.layer:
                attention = layer.attention.self
                qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])
                qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])
                layers.append((
                    qkv_weight,
                    qkv_bias,
                    layer.attention.output.dense,
                    layer.attention.output.LayerNorm,
                    layer.intermediate.dense,
                    layer.intermediate.intermediate_act_fn,
                    layer.output.dense,
                    layer.output.LayerNorm,
                ))
        except AttributeError as err:  # a look-alike with another layout
            logger.info("packed forward unavailable for %s: %s", type(model).__name__, err)
            return None
        return cls(model, layers, config.num_attention_heads)

    def __call__(self, input_ids: Any, mask: Any) -> Any:
        import torch.nn.functional as F

        batch, length = input_ids.shape
        hidden = self.model.embeddings(input_ids=input_ids)
        width = hidden.shape[-1]
        keep = mask.reshape(-1).nonzero().squeeze(1)  # flat positions of the real tokens
        x = hidden.reshape(batch * length, width).index_select(0, keep)
        attn_mask = mask.bool()[:, None, None, :]
        # One zeroed buffer per batch: every layer overwrites the real rows, padding rows stay 0
        # (uninitialised padding could hold NaN, and 0 attention weight x NaN is NaN).
        padded = x.new_zeros(batch * length, 3 * width)
        for qkv_weight, qkv_bias, out_dense, out_norm, up, act, down, norm in self.layers:
            padded.index_copy_(0, keep, F.linear(x, qkv_weight, qkv_bias))
            q, k, v = padded.view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            context = context.transpose(1, 2).reshape(batch * length, width).index_select(0, keep)
            x = out_norm(out_dense(context) + x)
            x = norm(down(act(up(x))) + x)
        return x.new_zeros(batch * length, width).index_copy_(0, keep, x).view(batch, length, width)
