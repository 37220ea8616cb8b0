"""Convert the original fairseq Prism model directory (``m39v1``) to a transformers-style folder.

Input: the directory of http://data.statmt.org/prism/m39v1.tar (``checkpoint.pt``,
``spm.model``, ``dict.src.txt``, ``dict.tgt.txt``). Output: the folder layout of the converted
weights on the Hub (``dariast/prism``, transformers PR #35281), which ``nlgscore.PrismScorer``
loads with ``checkpoint=OUT``:

* ``config.json``: ``model_type: prism`` with the sizes read from the weights' shapes and the
  attention heads from the checkpoint's training arguments (or ``--heads``);
* ``model.safetensors``: the fairseq weight names under ``model.`` (``model.shared.weight`` for
  the one embedding matrix Prism shares between encoder, decoder and output projection;
  ``model.encoder.layers.0.self_attn.k_proj.weight`` ...); fairseq's final ``layer_norm`` is kept
  when the model is pre-norm, and its absence marks a post-norm model (m39v1 is post-norm);
* ``spm.model`` (copied) and ``prism_vocab.json``: the fairseq dictionary in fairseq's order
  (``<s> <pad> </s> <unk>``, then ``dict.tgt.txt``), language tags spelled ``<en>`` as in
  the original.

The checkpoint is read with ``torch.load(weights_only=True)``: only tensors, containers and the
``argparse.Namespace`` of fairseq's training arguments are accepted, never arbitrary code.

Usage: ``python scripts/convert_prism_fairseq.py m39v1/ prism-m39v1-hf/``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq Dictionary() adds these first
# Tensors of a fairseq checkpoint that carry no weights (buffers and version counters).
_SKIP = re.compile(r"(\.version|_float_tensor)$")


def load_fairseq_checkpoint(path: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(state dict, training arguments as a dict) of a fairseq ``checkpoint.pt``."""
    import torch

    # fairseq <= 0.9 stores its arguments as an argparse.Namespace: allow exactly that class.
    with torch.serialization.safe_globals([argparse.Namespace]):
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise ValueError(f"{path} is not a fairseq checkpoint (no 'model' entry)")
    args = checkpoint.get("args")
    if args is None and isinstance(checkpoint.get("cfg"), dict):
        args = checkpoint["cfg"].get("model")
    args = vars(args) if isinstance(args, argparse.Namespace) else dict(args or {})
    return checkpoint["model"], args


def read_fairseq_dict(path: str) -> List[str]:
    """Symbols of a fairseq ``dict.txt`` in id order, the four specials first."""
    symbols = list(FAIRSEQ_SPECIALS)
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.endswith(" #fairseq:overwrite"):
                line = line[: -len(" #fairseq:overwrite")]
            symbol = line.rsplit(" ", 1)[0]  # "<symbol> <count>"
            if symbol in symbols:
                # fairseq would give the second one a new id that a name → id map cannot hold.
                raise ValueError(f"{path}:{number}: duplicate symbol {symbol!r}")
            symbols.append(symbol)
    return symbols


def build_vocab(symbols: Sequence[str], size: int) -> Dict[str, int]:
    """Symbol → id; rows past the dictionary get fairseq's padding names (``madeupword0000`` ...)."""
    if len(symbols) > size:
        raise ValueError(f"the dictionary has {len(symbols)} symbols but the embedding only {size} rows")
    vocab = {symbol: i for i, symbol in enumerate(symbols)}
    k = 0
    while len(vocab) < size:
        name = f"madeupword{k:04d}"
        k += 1
        if name not in vocab:
            vocab[name] = len(vocab)
    return vocab


# Weights every convertible checkpoint has (the shared embeddings and a first layer on each side).
REQUIRED_WEIGHTS = ("encoder.embed_tokens.weight", "encoder.layers.0.fc1.weight", "decoder.layers.0.fc1.weight")


def _count_layers(state: Dict[str, Any], side: str) -> int:
    found = {int(m.group(1)) for key in state for m in [re.match(rf"{side}\.layers\.(\d+)\.", key)] if m}
    return max(found) + 1 if found else 0


def _check_architecture(state: Dict[str, Any], args: Dict[str, Any]) -> None:
    """Refuse fairseq variants that the loaders cannot represent, instead of converting them wrongly."""
    missing = [key for key in REQUIRED_WEIGHTS if key not in state]
    if missing:
        raise ValueError(
            f"the checkpoint is not a fairseq translation model Prism can be converted from: it has no {', '.join(missing)}"
        )
    problems = []
    if ("encoder.layer_norm.weight" in state) != ("decoder.layer_norm.weight" in state):
        problems.append("pre-norm on one side only")
    if any("layernorm_embedding" in key for key in state):
        problems.append("layernorm_embedding")
    if "encoder.embed_positions.weight" in state:
        problems.append("learned positional embeddings (Prism's are sinusoidal)")
    if args.get("activation_fn", "relu") != "relu":
        problems.append(f"activation {args['activation_fn']!r}")
    embed = state["encoder.embed_tokens.weight"]
    for key in ("decoder.embed_tokens.weight", "decoder.output_projection.weight"):
        if key in state and not state[key].equal(embed):
            problems.append(f"{key} differs from encoder.embed_tokens.weight (Prism shares all embeddings)")
    if problems:
        raise ValueError("cannot convert this checkpoint: " + "; ".join(problems))


def prism_state_dict(state: Dict[str, Any]) -> Dict[str, Any]:
    """fairseq key names → the port's: ``model.`` prefix, the tied embeddings stored once."""
    out = {"model.shared.weight": state["encoder.embed_tokens.weight"].contiguous()}
    for key, tensor in state.items():
        if _SKIP.search(key) or key in (
            "encoder.embed_tokens.weight",
            "decoder.embed_tokens.weight",
            "decoder.output_projection.weight",
        ):
            continue
        if not key.startswith(("encoder.", "decoder.")):
            raise ValueError(f"unexpected fairseq weight {key!r}")
        # Inside the stacks fairseq, M2M100 and Marian use the same names (self_attn,
        # encoder_attn, fc1/fc2, *_layer_norm, layer_norm); only the "model." prefix differs.
        out[f"model.{key}"] = tensor.contiguous()
    return out


def prism_config(
    state: Dict[str, Any], args: Dict[str, Any], vocab: Dict[str, int], heads: Optional[int]
) -> Dict[str, Any]:
    size, d_model = state["encoder.embed_tokens.weight"].shape
    heads_enc = args.get("encoder_attention_heads", heads)
    heads_dec = args.get("decoder_attention_heads", heads)
    if heads_enc is None or heads_dec is None:
        raise ValueError("the checkpoint does not record its attention heads; pass --heads")
    return {
        "model_type": "prism",
        "architectures": ["PrismForConditionalGeneration"],
        "is_encoder_decoder": True,
        "vocab_size": int(size),
        "d_model": int(d_model),
        "encoder_layers": _count_layers(state, "encoder"),
        "decoder_layers": _count_layers(state, "decoder"),
        "encoder_attention_heads": int(heads_enc),
        "decoder_attention_heads": int(heads_dec),
        "encoder_ffn_dim": int(state["encoder.layers.0.fc1.weight"].shape[0]),
        "decoder_ffn_dim": int(state["decoder.layers.0.fc1.weight"].shape[0]),
        "max_position_embeddings": int(args.get("max_source_positions", 1024)),
        "scale_embedding": not args.get("no_scale_embedding", False),
        "activation_function": "relu",
        "normalize_before": "encoder.layer_norm.weight" in state,  # informational; loaders read the weights
        "pad_token_id": vocab["<pad>"],
        "bos_token_id": vocab["<s>"],
        "eos_token_id": vocab["</s>"],
        "decoder_start_token_id": vocab["</s>"],  # fairseq feeds </s> as the first decoder input
        "tie_word_embeddings": True,
    }


def convert(model_dir: str, out_dir: str, heads: Optional[int] = None) -> str:
    """Write the transformers folder for ``model_dir`` into ``out_dir``; return ``out_dir``."""
    from safetensors.torch import save_file

    state, args = load_fairseq_checkpoint(os.path.join(model_dir, "checkpoint.pt"))
    _check_architecture(state, args)
    dict_path = os.path.join(model_dir, "dict.tgt.txt")
    if not os.path.isfile(dict_path):
        dict_path = os.path.join(model_dir, "dict.txt")
    symbols = read_fairseq_dict(dict_path)
    src_dict = os.path.join(model_dir, "dict.src.txt")
    if os.path.isfile(src_dict) and read_fairseq_dict(src_dict) != symbols:
        raise ValueError("dict.src.txt and dict.tgt.txt differ, but Prism shares one vocabulary")
    vocab = build_vocab(symbols, int(state["encoder.embed_tokens.weight"].shape[0]))
    config = prism_config(state, args, vocab, heads)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    save_file(prism_state_dict(state), os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    shutil.copyfile(os.path.join(model_dir, "spm.model"), os.path.join(out_dir, "spm.model"))
    with open(os.path.join(out_dir, "prism_vocab.json"), "w", encoding="utf-8") as handle:
        json.dump(vocab, handle, ensure_ascii=False, indent=0)
    # Load the result the way nlgscore does: every stored weight must find its place.
    from nlgscore.seq2seq.prism_loading import load_prism

    load_prism(out_dir, device="cpu")
    return out_dir


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", help="fairseq Prism directory (checkpoint.pt, spm.model, dict.*.txt)")
    parser.add_argument("out_dir", help="output folder for the transformers checkpoint")
    parser.add_argument(
        "--heads", type=int, default=None, help="attention heads, if the checkpoint does not record them"
    )
    args = parser.parse_args(argv)
    try:
        convert(args.model_dir, args.out_dir, heads=args.heads)
    except (ValueError, OSError) as err:
        print(f"convert_prism_fairseq: error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
