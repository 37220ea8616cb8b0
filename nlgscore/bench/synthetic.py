"""Random-weight models of real shapes, built offline, for timing the larger architectures.

Speed does not depend on the weights, so a ``bart-base``- or ``roberta-large``-shaped model with
random weights times like the real one without anything being downloaded. Its tokenizer is a
byte-level BPE (the GPT-2/RoBERTa/BART scheme) trained in about a second on the benchmark's own
sentences: on WMT English it gives about as many tokens per sentence as the real 50k-merge
vocabulary (24 vs MiniLM's 26 WordPiece tokens on kk-en), which is what the timing depends on.
The model keeps the real 50,265-entry vocabulary, so embedding and LM-head costs are real too.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Sequence

from nlgscore.core.errors import ArgumentError

# Architecture hyper-parameters of the public checkpoints (their config.json files).
SHAPES: Dict[str, Dict[str, Any]] = {
    "roberta-large": {
        "model_type": "roberta",
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
        "vocab_size": 50265,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "layer_norm_eps": 1e-5,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
    },
    "bart-base": {
        "model_type": "bart",
        "d_model": 768,
        "encoder_layers": 6,
        "decoder_layers": 6,
        "encoder_attention_heads": 12,
        "decoder_attention_heads": 12,
        "encoder_ffn_dim": 3072,
        "decoder_ffn_dim": 3072,
        "vocab_size": 50265,
        "max_position_embeddings": 1024,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "decoder_start_token_id": 2,
        "forced_eos_token_id": 2,
    },
}
# bert_score's default layer for roberta-large (model2layers), used for the GPU comparison.
BERTSCORE_LAYERS = {"roberta-large": 17}
_TOKENIZER_CLASS = {"roberta": "RobertaTokenizer", "bart": "BartTokenizer"}
# The real tokenizers' limits; bert_score needs a finite one (a 1e30 sentinel overflows the
# Rust tokenizer of transformers 5: bert_score issue #205).
_MAX_LENGTH = {"roberta": 512, "bart": 1024}
_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def build_tokenizer(texts: Sequence[str], folder: str, model_type: str, vocab_size: int) -> None:
    """Train a byte-level BPE on ``texts`` and save it to ``folder`` as a transformers tokenizer."""
    from tokenizers import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=2, special_tokens=_SPECIAL, show_progress=False)
    tokenizer.save_model(folder)
    config = {
        "tokenizer_class": _TOKENIZER_CLASS[model_type],
        "model_max_length": _MAX_LENGTH[model_type],
        "bos_token": "<s>",
        "eos_token": "</s>",
        "sep_token": "</s>",
        "cls_token": "<s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "mask_token": "<mask>",
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)


def build_random_model(shape: str, folder: str, texts: Sequence[str], seed: int = 0) -> str:
    """Write a ``shape``-shaped model with random weights (``seed``) and a BPE tokenizer to ``folder``."""
    if shape not in SHAPES:
        raise ArgumentError(f"model shape must be one of {sorted(SHAPES)}, got {shape!r}")
    import torch
    from transformers import AutoConfig, AutoModel, BartForConditionalGeneration

    params = dict(SHAPES[shape])
    model_type = params.pop("model_type")
    os.makedirs(folder, exist_ok=True)
    build_tokenizer(texts, folder, model_type, params["vocab_size"])
    config = AutoConfig.for_model(model_type, **params)
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(config) if model_type == "bart" else AutoModel.from_config(config)
    model.save_pretrained(folder)
    return folder
