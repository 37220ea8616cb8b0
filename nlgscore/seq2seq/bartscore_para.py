"""The BARTScore ``bart-large-cnn-para`` weights: the authors' ParaBank2 fine-tune (``bart.pth``),
loaded into a ``bart-large-cnn`` model from a file or a Hub repo."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from nlgscore.errors import ArgumentError, ArgumentTypeError


def load_para_weights(model: Any, source: Optional[str], entry: Dict[str, Any]) -> str:
    """Load the ParaBank2 state dict (``bart.pth``) into ``model``; return its signature label.

    ``source`` is a file, or a Hub repo id holding ``entry["filename"]``; ``None`` uses the
    table's ``hub_repo``. The file is read with ``weights_only=True`` (no pickled code runs).
    Missing keys (other than tied copies of loaded weights) and unexpected keys are errors.
    """
    import torch

    source = source if source is not None else entry.get("hub_repo")
    filename = entry.get("filename", "bart.pth")
    if not source:
        raise ArgumentError(
            "variant 'bart-large-cnn-para' needs the authors' ParaBank2 weights: pass para_weights=<path to "
            f"{filename}> (the BARTScore authors' Google Drive file id {entry.get('google_drive_id')}) or a Hub "
            "repo id holding it, or set para_weights.hub_repo in nlgscore/data/bartscore_variants.json"
        )
    if os.path.isfile(source):
        path, label = source, f"file-{os.path.basename(source)}-{os.path.getsize(source)}"
    elif os.path.exists(source) or source.endswith((".pth", ".pt", ".bin")) or source.count("/") != 1:
        raise FileNotFoundError(f"para_weights {source!r} is not a file nor a Hub repo id (owner/name)")
    else:
        path = _hub_file(source, filename)
        label = f"{source}@{os.path.basename(os.path.dirname(path))}"
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ArgumentTypeError(f"para_weights {source!r} is not a state dict of tensors")
    outcome = model.load_state_dict(state, strict=False)
    own = model.state_dict()
    loaded = {own[k].data_ptr() for k in state if k in own}
    # Tied weights (lm_head = shared embeddings) need not be stored twice.
    missing = [k for k in outcome.missing_keys if own[k].data_ptr() not in loaded]
    if missing or outcome.unexpected_keys:
        raise ArgumentError(
            f"para_weights {source!r} does not fit the checkpoint: missing keys {missing[:10]}, "
            f"unexpected keys {list(outcome.unexpected_keys)[:10]}"
        )
    return label


def _hub_file(repo: str, filename: str) -> str:
    from huggingface_hub import hf_hub_download

    from nlgscore.backend.models import ModelNotAvailableError

    try:
        return hf_hub_download(repo, filename)
    except Exception as err:
        raise ModelNotAvailableError(
            f"para_weights: {filename} from the Hub repo {repo!r} is not cached and cannot be downloaded "
            f"({type(err).__name__}: {err}); pass a local file instead"
        ) from err
