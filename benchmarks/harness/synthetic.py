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

from nlgscore.errors import ArgumentError

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
    # Tiny shapes for the CPU dry runs of the benchmarks (seconds to build; timings meaningless).
    "roberta-tiny": {
        "model_type": "roberta",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 2,
        "intermediate_size": 128,
        "vocab_size": 1000,  # a BPE trained on a few dozen sentences stops short of 50k tokens
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
SHAPES["bart-large"] = dict(
    SHAPES["bart-base"],
    d_model=1024,
    encoder_layers=12,
    decoder_layers=12,
    encoder_attention_heads=16,
    decoder_attention_heads=16,
    encoder_ffn_dim=4096,
    decoder_ffn_dim=4096,
)
# bert_score's default layer for roberta-large (model2layers), used for the GPU comparison.
BERTSCORE_LAYERS = {"roberta-large": 17, "roberta-tiny": 2}
_TOKENIZER_CLASS = {"roberta": "RobertaTokenizer", "bart": "BartTokenizer"}
# The real tokenizers' limits; bert_score needs a finite one (a 1e30 sentinel overflows the
# Rust tokenizer of transformers 5: bert_score issue #205).
_MAX_LENGTH = {"roberta": 512, "bart": 1024}
_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def build_tokenizer(texts: Sequence[str], folder: str, model_type: str, vocab_size: int) -> None:
    """Train a byte-level BPE on ``texts`` and save it to ``folder`` as a transformers tokenizer."""
    from tokenizers import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(
        list(texts), vocab_size=vocab_size, min_frequency=2, special_tokens=_SPECIAL, show_progress=False
    )
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


def build_random_model(shape: str, folder: str, texts: Sequence[str], seed: int = 0, device: str = "cpu") -> str:
    """Write a ``shape``-shaped model with random weights (``seed``) and a BPE tokenizer to ``folder``.

    ``device``: where the weights are drawn (on a GPU, seconds instead of a CPU's tens of seconds
    for a 400M-parameter model)."""
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
    with torch.device(device):
        model = BartForConditionalGeneration(config) if model_type == "bart" else AutoModel.from_config(config)
    model.save_pretrained(folder)
    return folder


# Prism's m39v1 network (metrics/prism/README.md: 8+8 layers, d_model 1280, 745M parameters, a
# 64k vocabulary): 20 heads of 64, feed-forward 12,288, as an M2M100 (pre-norm) model: the same
# FLOPs as the post-norm original.
PRISM_SHAPE = {
    "d_model": 1280,
    "encoder_layers": 8,
    "decoder_layers": 8,
    "encoder_attention_heads": 20,
    "decoder_attention_heads": 20,
    "encoder_ffn_dim": 12288,
    "decoder_ffn_dim": 12288,
    "vocab_size": 64000,
    "max_position_embeddings": 1024,
    "activation_function": "relu",
    "scale_embedding": True,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "decoder_start_token_id": 2,
}
_PRISM_PIECES = 8000  # the SentencePiece model trained here; the network keeps the real 64k embedding


def build_prism_shaped(folder: str, texts: Sequence[str], seed: int = 0, device: str = "cpu") -> str:
    """Write a Prism-shaped M2M100 folder with random weights and a SentencePiece model trained on ``texts``."""
    import sentencepiece
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    os.makedirs(folder, exist_ok=True)
    prefix = os.path.join(folder, "sentencepiece.bpe")
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(list(texts)),
        model_prefix=prefix,
        vocab_size=_PRISM_PIECES,
        model_type="bpe",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    spm = sentencepiece.SentencePieceProcessor(model_file=prefix + ".model")
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(spm.get_piece_size()):
        vocab.setdefault(spm.id_to_piece(i), len(vocab))
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as handle:
        json.dump(vocab, handle, ensure_ascii=False)
    # The stock M2M100 layout: language tags follow the vocabulary (nlgscore.seq2seq.prism_tokenizer).
    config = {
        "tokenizer_class": "M2M100Tokenizer",
        "language_codes": "m2m100",
        "num_madeup_words": 8,
        "model_max_length": 1024,
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    torch.manual_seed(seed)
    with torch.device(device):  # see build_random_model
        model = M2M100ForConditionalGeneration(M2M100Config(**PRISM_SHAPE))
    model.eval().save_pretrained(folder)
    return folder
