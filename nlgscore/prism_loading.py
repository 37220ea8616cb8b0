"""Loading a Prism checkpoint into transformers' M2M100 architecture.

Two folder layouts are accepted:

* a stock M2M100 folder (``config.json`` with ``model_type: m2m_100``, ``vocab.json``,
  ``sentencepiece.bpe.model``), e.g. our converter's output or ``tests/golden/tiny-prism``;
* the layout of the converted m39v1 weights on the Hub (``dariast/prism``, from the unmerged
  transformers PR #35281): ``model_type: prism`` and ``PrismForConditionalGeneration``, which stock
  transformers cannot load with ``AutoModel``. The architecture is M2M100's, so an
  ``M2M100Config`` is built from the same fields and the safetensors are loaded into
  ``M2M100ForConditionalGeneration``; any weight that does not find its place is an error.

>>> loaded = load_prism("tests/golden/tiny-prism")
>>> loaded.model.config.model_type, loaded.tokenizer.lang_id("en"), loaded.name
('m2m_100', 819, 'tiny-prism')
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional

from nlgscore.models import dtype_name, resolve, resolve_device, resolve_dtype
from nlgscore.prism_tokenizer import PrismTokenizer
from nlgscore.tables import table

# Keys of the port's config.json that describe the files, not the network.
_NOT_ARCHITECTURE = ("model_type", "architectures", "auto_map", "transformers_version", "_name_or_path")
# Stored tensors that M2M100 recomputes: sinusoidal position tables and fairseq bookkeeping.
_HARMLESS = re.compile(r"(embed_positions\.(weights|_float_tensor)|\.version|_float_tensor)$")
# Weights that may legitimately be absent: M2M100 ties them to the shared embedding.
_TIED = re.compile(r"^(lm_head\.weight|model\.(encoder|decoder)\.embed_tokens\.weight)$")


@dataclass
class LoadedPrism:
    """A model ready to score, its tokenizer, and what a signature records about them."""

    model: Any  # M2M100ForConditionalGeneration in eval mode
    tokenizer: PrismTokenizer
    name: str
    revision: str
    dtype: str


def read_config(path: str, checkpoint: str) -> Dict[str, Any]:
    config_path = os.path.join(path, "config.json")
    if not os.path.isfile(config_path):
        raise ValueError(f"checkpoint {checkpoint!r} has no config.json in {path!r}")
    with open(config_path, encoding="utf-8") as handle:
        return json.load(handle)


def m2m100_config(raw: Dict[str, Any], checkpoint: str) -> Any:
    """An ``M2M100Config`` for a config.json of model_type ``m2m_100`` or ``prism``."""
    from transformers import M2M100Config

    model_type = raw.get("model_type")
    if model_type in ("m2m_100", "prism"):
        return M2M100Config.from_dict({key: value for key, value in raw.items() if key not in _NOT_ARCHITECTURE})
    if not raw.get("is_encoder_decoder", False):
        raise ValueError(
            f"checkpoint {checkpoint!r} is not an encoder-decoder model (model_type {model_type!r}); "
            "Prism needs a translation model with the M2M100 architecture"
        )
    raise ValueError(
        f"checkpoint {checkpoint!r} has model_type {model_type!r}; Prism needs an M2M100-architecture "
        "checkpoint (model_type 'm2m_100', or 'prism' as in dariast/prism)"
    )


def check_loading_info(info: Dict[str, Any], checkpoint: str) -> None:
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
        raise ValueError(f"checkpoint {checkpoint!r} does not fit the M2M100 architecture; " + "; ".join(problems))


def load_prism(
    checkpoint: Optional[str] = None,
    revision: Optional[str] = None,
    device: Any = None,
    dtype: Any = None,
) -> LoadedPrism:
    """Load ``checkpoint`` (folder or Hub id; default: the converted m39v1 weights, pinned)."""
    from transformers import M2M100ForConditionalGeneration

    defaults = table("prism")
    if checkpoint is None:
        checkpoint = defaults["default_checkpoint"]
        revision = revision or defaults["default_revision"]
    resolved = resolve(checkpoint, revision)
    config = m2m100_config(read_config(resolved.path, str(checkpoint)), str(checkpoint))
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    # An explicit config makes from_pretrained ignore config.json's (unknown) model_type.
    model, info = M2M100ForConditionalGeneration.from_pretrained(resolved.path, config=config, output_loading_info=True)
    check_loading_info(info, str(checkpoint))
    model = model.to(device=torch_device, dtype=torch_dtype).eval()
    tokenizer = PrismTokenizer.from_folder(resolved.path, max_positions=config.max_position_embeddings)
    # A tag id past the embedding table would fail deep inside torch; drop such tags here.
    tokenizer.lang_ids = {code: i for code, i in tokenizer.lang_ids.items() if i < config.vocab_size}
    if not tokenizer.lang_ids:
        raise ValueError(f"checkpoint {checkpoint!r} has no language tags (<en> or __en__) within its vocabulary of {config.vocab_size}")
    return LoadedPrism(model=model, tokenizer=tokenizer, name=resolved.name, revision=resolved.revision, dtype=dtype_name(torch_dtype))
