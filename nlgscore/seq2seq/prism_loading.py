"""Loading a Prism checkpoint into a stock transformers architecture.

Accepted folders:

* a stock M2M100 folder (``config.json`` with ``model_type: m2m_100``, ``vocab.json``,
  ``sentencepiece.bpe.model``), e.g. ``tests/golden/tiny-prism``;
* the layout of the converted m39v1 weights on the Hub (``dariast/prism``, from the unmerged
  transformers PR #35281) and of ``scripts/convert_prism_fairseq.py``: ``model_type: prism``,
  ``model.safetensors`` with fairseq-transformer weight names under ``model.``,
  ``prism_vocab.json`` and ``spm.model``. Stock transformers has no ``prism`` classes, so:

  - weights **with** final encoder/decoder layer norms (a pre-norm fairseq model) go into
    ``M2M100ForConditionalGeneration``, which is exactly that network;
  - weights **without** them are a post-norm fairseq transformer (fairseq's default
    ``transformer`` architecture; the PR's ``PrismEncoderLayer`` normalises after each residual
    and has no final layer norm), which M2M100 cannot represent. They go into
    ``MarianMTModel`` (post-norm, no embedding layer norm, scaled and shared embeddings), whose
    fixed position table is overwritten with fairseq's sinusoids at fairseq's positions
    (``padding_idx + 1`` onwards).

Any stored weight that does not find its place, or model weight that is not stored (tied
embeddings and position tables excepted), is an error naming the weights.

>>> loaded = load_prism("tests/golden/tiny-prism")
>>> type(loaded.model).__name__, loaded.tokenizer.lang_id("en"), loaded.name
('M2M100ForConditionalGeneration', 819, 'tiny-prism')
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional

from nlgscore.backend.gemm import use_onednn_linears
from nlgscore.backend.loading import model_loading
from nlgscore.backend.model_files import IncompleteModelError, read_json
from nlgscore.backend.models import resolve
from nlgscore.backend.tables import table
from nlgscore.core.runtime import dtype_name, resolve_runtime, settle_dtype
from nlgscore.errors import ArgumentError
from nlgscore.seq2seq.prism_tokenizer import PrismTokenizer

# Keys of the port's config.json that describe the files, not the network.
_NOT_ARCHITECTURE = ("model_type", "architectures", "auto_map", "transformers_version", "_name_or_path")
# Stored tensors that are recomputed: sinusoidal position tables and fairseq bookkeeping.
_HARMLESS = re.compile(r"(embed_positions\.(weights?|_float_tensor)|\.version|_float_tensor)$")
# Weights that may legitimately be absent: tied to the shared embedding, or recomputed.
_TIED = re.compile(
    r"^(lm_head\.weight|model\.(encoder|decoder)\.embed_tokens\.weight|model\.(encoder|decoder)\.embed_positions\.weights?|final_logits_bias)$"
)
# Where the port may store the one shared embedding matrix.
_EMBEDDINGS = (
    "model.shared.weight",
    "model.encoder.embed_tokens.weight",
    "model.decoder.embed_tokens.weight",
    "lm_head.weight",
)


@dataclass
class LoadedPrism:
    """A model ready to score, its tokenizer, and what a signature records about them."""

    model: Any  # a transformers encoder-decoder in eval mode
    tokenizer: PrismTokenizer
    name: str
    revision: str
    dtype: str


def read_config(path: str, checkpoint: str) -> Dict[str, Any]:
    config_path = os.path.join(path, "config.json")
    if not os.path.isfile(config_path):
        raise ArgumentError(f"checkpoint {checkpoint!r} has no config.json in {path!r}")
    config = read_json(config_path, "model config")
    if not isinstance(config, dict):
        raise IncompleteModelError(f"model config {config_path!r} must be a JSON object, got a {type(config).__name__}")
    return config


def check_loading_info(info: Dict[str, Iterable], checkpoint: str) -> None:
    """Raise if a stored weight was not used or a model weight was not stored (tied ones excepted)."""
    missing = sorted(key for key in info.get("missing_keys", ()) if not _TIED.match(key))
    unexpected = sorted(key for key in info.get("unexpected_keys", ()) if not _HARMLESS.search(key))
    mismatched = sorted(str(item[0] if isinstance(item, tuple) else item) for item in info.get("mismatched_keys", ()))
    problems = []
    if missing:
        problems.append(f"missing weights: {', '.join(missing)}")
    if unexpected:
        problems.append(f"unexpected weights: {', '.join(unexpected)}")
    if mismatched:
        problems.append(f"weights of the wrong shape: {', '.join(mismatched)}")
    if problems:
        raise ArgumentError(
            f"checkpoint {checkpoint!r} does not fit a Prism (fairseq transformer) model; " + "; ".join(problems)
        )


def fairseq_sinusoids(n: int, dim: int, padding_idx: int) -> Any:
    """fairseq's sinusoidal embeddings of positions ``padding_idx+1 .. padding_idx+n`` (float32 as fairseq).

    >>> [round(v, 6) for v in fairseq_sinusoids(3, 4, 1)[0].tolist()]
    [0.909297, 0.0002, -0.416147, 1.0]
    """
    import torch

    half = dim // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000) / (half - 1)))
    angles = torch.arange(padding_idx + 1, padding_idx + 1 + n, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)
    table_ = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    if dim % 2:
        table_ = torch.cat([table_, torch.zeros(n, 1)], dim=1)
    return table_


def _stored_keys(path: str, checkpoint: str) -> List[str]:
    from safetensors import safe_open

    weights = os.path.join(path, "model.safetensors")
    if not os.path.isfile(weights):
        raise ArgumentError(f"checkpoint {checkpoint!r} has no model.safetensors in {path!r}")
    with safe_open(weights, framework="pt") as handle:
        return list(handle.keys())


def _pre_norm_model(path: str, raw: Dict[str, Any], checkpoint: str) -> Any:
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    config = M2M100Config.from_dict({key: value for key, value in raw.items() if key not in _NOT_ARCHITECTURE})
    # An explicit config makes from_pretrained ignore config.json's model_type ("prism").
    # output_loading_info=True makes it a (model, info) pair, which the stubs do not say
    loaded: Any = M2M100ForConditionalGeneration.from_pretrained(path, config=config, output_loading_info=True)
    model, info = loaded
    check_loading_info(info, checkpoint)
    return model


def _post_norm_model(path: str, raw: Dict[str, Any], checkpoint: str) -> Any:
    import torch
    from safetensors.torch import load_file
    from transformers import MarianConfig, MarianMTModel

    fields = {
        key: raw[key]
        for key in (
            "vocab_size",
            "d_model",
            "encoder_layers",
            "decoder_layers",
            "encoder_attention_heads",
            "decoder_attention_heads",
            "encoder_ffn_dim",
            "decoder_ffn_dim",
        )
        if key in raw
    }
    config = MarianConfig(
        **fields,
        max_position_embeddings=raw.get("max_position_embeddings", 1024),
        activation_function=raw.get("activation_function", "relu"),
        scale_embedding=raw.get("scale_embedding", True),
        pad_token_id=raw.get("pad_token_id", 1),
        eos_token_id=raw.get("eos_token_id", 2),
        bos_token_id=raw.get("bos_token_id", 0),
        decoder_start_token_id=raw.get("decoder_start_token_id", 2),
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
    )
    stored = load_file(os.path.join(path, "model.safetensors"))
    # A base-model save (PrismModel rather than PrismForConditionalGeneration) has no "model." prefix.
    stored = {
        key if key.startswith(("model.", "lm_head.", "final_logits_bias")) else f"model.{key}": value
        for key, value in stored.items()
    }
    embeddings = [stored[key] for key in _EMBEDDINGS if key in stored]
    if not embeddings:
        raise ArgumentError(f"checkpoint {checkpoint!r} stores no token embedding ({' or '.join(_EMBEDDINGS)})")
    if any(not e.equal(embeddings[0]) for e in embeddings[1:]):
        raise ArgumentError(f"checkpoint {checkpoint!r} has distinct input/output embeddings; Prism shares one matrix")
    state = {"model.shared.weight": embeddings[0]}
    unexpected = []
    for key, tensor in stored.items():
        if key in _EMBEDDINGS or _HARMLESS.search(key):
            continue
        if key == "final_logits_bias" or key.startswith(("model.encoder.layers.", "model.decoder.layers.")):
            state[key] = tensor  # fairseq, the port and Marian name the layer weights alike
        else:
            unexpected.append(key)
    model = MarianMTModel(config)
    try:
        missing, extra = model.load_state_dict(state, strict=False)
    except RuntimeError as err:  # shapes that do not fit the config
        raise ArgumentError(
            f"checkpoint {checkpoint!r}: weights of the wrong shape for its config.json: {err}"
        ) from err
    check_loading_info({"missing_keys": missing, "unexpected_keys": unexpected + list(extra)}, checkpoint)
    with torch.no_grad():
        for side in (model.model.encoder, model.model.decoder):
            weight = side.embed_positions.weight
            weight.copy_(fairseq_sinusoids(weight.shape[0], weight.shape[1], int(config.pad_token_id or 0)))
    return model


def _load_model(path: str, raw: Dict[str, Any], checkpoint: str) -> Any:
    model_type = raw.get("model_type")
    if model_type == "m2m_100":
        return _pre_norm_model(path, raw, checkpoint)
    if model_type == "prism":
        if "model.encoder.layer_norm.weight" in _stored_keys(path, checkpoint):
            return _pre_norm_model(path, raw, checkpoint)
        return _post_norm_model(path, raw, checkpoint)
    if not raw.get("is_encoder_decoder", False):
        raise ArgumentError(
            f"checkpoint {checkpoint!r} is not an encoder-decoder model (model_type {model_type!r}); "
            "Prism needs a translation model with the fairseq transformer architecture"
        )
    raise ArgumentError(
        f"checkpoint {checkpoint!r} has model_type {model_type!r}; Prism needs model_type 'prism' "
        "(dariast/prism, scripts/convert_prism_fairseq.py) or 'm2m_100'"
    )


def load_prism(
    checkpoint: Optional[str] = None,
    revision: Optional[str] = None,
    device: Any = None,
    dtype: Any = None,
    progress: bool = False,
    kernel: str = "auto",
) -> LoadedPrism:
    """Load ``checkpoint`` (folder or Hub id; default: the converted m39v1 weights, pinned) on
    ``device`` in ``dtype`` (as :func:`nlgscore.core.runtime.resolve_runtime` reads them; ``"auto"``
    is settled on the loaded model); ``progress`` shows transformers' loading bar; ``kernel``:
    the CPU linear kernel (:func:`nlgscore.backend.gemm.use_onednn_linears`)."""
    defaults = table("prism")
    if checkpoint is None:
        checkpoint = defaults["default_checkpoint"]
        revision = revision or defaults["default_revision"]
    runtime = resolve_runtime("seq2seq", device, dtype)
    with model_loading(progress):
        resolved = resolve(checkpoint, revision, flag="checkpoint=", family="seq2seq")
        model = _load_model(resolved.path, read_config(resolved.path, str(checkpoint)), str(checkpoint))
        model = model.to(runtime.device).eval()
        torch_dtype = settle_dtype(model, runtime.dtype)
        if runtime.device.type == "cpu":
            use_onednn_linears(model, kernel)
    config = model.config
    tokenizer = PrismTokenizer.from_folder(resolved.path, max_positions=config.max_position_embeddings)
    # A tag id past the embedding table would fail deep inside torch; drop such tags here.
    tokenizer.lang_ids = {code: i for code, i in tokenizer.lang_ids.items() if i < config.vocab_size}
    if not tokenizer.lang_ids:
        raise ArgumentError(
            f"checkpoint {checkpoint!r} has no language tags (<en> or __en__) within its vocabulary of {config.vocab_size}"
        )
    return LoadedPrism(
        model=model, tokenizer=tokenizer, name=resolved.name, revision=resolved.revision, dtype=dtype_name(torch_dtype)
    )
