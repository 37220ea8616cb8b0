"""Fit a BART state dict saved elsewhere (another transformers version, the BARTScore authors'
training wrapper) to a loaded model, or say exactly why it does not fit.

The BARTScore authors' ``bart.pth`` is ``torch.save(model.state_dict())`` of a
``BartForConditionalGeneration``, read back with a strict ``load_state_dict``. A file saved by
another transformers version can differ from today's model in ways that lose nothing:

* tied copies of one weight (``model.shared.weight`` = ``model.encoder.embed_tokens.weight`` =
  ``model.decoder.embed_tokens.weight`` = ``lm_head.weight``) may be stored once or not at all
  (copies that differ end as a strict ``load_state_dict`` leaves them: the last one stored wins);
* ``final_logits_bias``, a buffer that training never changes, may be absent (the model's is
  kept) or present where the model has no such buffer (dropped if it is all zeros);
* the authors' training script saved its wrapper module, whose keys carry one more ``model.``
  (``model.model.encoder...``); ``nn.DataParallel`` adds ``module.``.

Everything else must match key for key and shape for shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from nlgscore.errors import ArgumentError, ArgumentTypeError

# Buffers no optimiser step changes: the model's own value is the file's, whatever version saved it.
UNTRAINED_BUFFERS = ("final_logits_bias",)
# Wrappers whose state dict prefixes every key once: nn.DataParallel, the authors' ShardedBART.
WRAPPER_PREFIXES = ("module.", "model.")


@dataclass
class FittedState:
    """A state dict with every key of the model's, and what was done to the file's to get it."""

    state: Dict[str, Any]
    stripped_prefix: Optional[str] = None
    filled_tied: List[str] = field(default_factory=list)  # tied copies the file left out
    kept_from_model: List[str] = field(default_factory=list)  # untrained buffers the file left out
    dropped: List[str] = field(default_factory=list)  # all-zero buffers the model has no place for
    untied: List[str] = field(default_factory=list)  # stored copies of a tied weight overridden by a later one

    def notes(self) -> Dict[str, Any]:
        """What was done, for a conversion record (JSON-ready)."""
        return {
            "stripped_prefix": self.stripped_prefix,
            "filled_tied": self.filled_tied,
            "kept_from_model": self.kept_from_model,
            "dropped": self.dropped,
            "untied": self.untied,
        }


def fit_state_dict(model: Any, state: Any, what: str) -> FittedState:
    """``state`` as a complete state dict of ``model``, ready for a strict ``load_state_dict``.

    Args:
        model: the loaded model (a ``torch.nn.Module``) the weights are meant for.
        state: what ``torch.load`` returned for the file.
        what: how errors name the file and its argument, e.g. ``"para_weights 'bart.pth'"``.

    Returns:
        The fitted state dict and the changes made (see the module docstring).

    Raises:
        ArgumentTypeError: ``state`` is not a dict of tensors.
        ArgumentError: keys are missing or unexpected, or shapes differ.

    Example:
        >>> from transformers import AutoModelForSeq2SeqLM
        >>> model = AutoModelForSeq2SeqLM.from_pretrained("tests/golden/tiny-bart")
        >>> state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
        >>> fit_state_dict(model, state, "bart.pth").filled_tied
        ['lm_head.weight']
        >>> fit_state_dict(model, {"x": 1}, "bart.pth")
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: bart.pth is not a state dict of tensors ('x' holds int, not a tensor)
    """
    import torch

    if not isinstance(state, dict):
        raise ArgumentTypeError(f"{what} is not a state dict of tensors (got {type(state).__name__})")
    for key, value in state.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise ArgumentTypeError(
                f"{what} is not a state dict of tensors ({key!r} holds {type(value).__name__}, not a tensor)"
            )
    if not state:
        raise ArgumentError(f"{what} is an empty state dict")
    own = model.state_dict()
    fitted = FittedState(state={})
    state, fitted.stripped_prefix = _strip_wrapper(state, own)
    unexpected = []
    for key, tensor in state.items():
        if key in own:
            continue
        if key in UNTRAINED_BUFFERS and not tensor.any():
            fitted.dropped.append(key)
        else:
            unexpected.append(key)
    missing, shapes = [], []
    for group in _tied_groups(own):
        present = [k for k in group if k in state]
        wrong = [k for k in present if state[k].shape != own[k].shape]
        shapes += [f"{k}: {tuple(state[k].shape)} in the file, {tuple(own[k].shape)} in the model" for k in wrong]
        if not present:
            if all(k in UNTRAINED_BUFFERS for k in group):
                fitted.kept_from_model += group
                fitted.state.update({k: own[k] for k in group})
            else:
                missing += group
            continue
        if wrong:
            continue
        # A strict load_state_dict (the authors' loader) copies every stored copy into the one
        # tensor in state-dict order, so the last one present is the value the model ends with.
        last = state[present[-1]]
        fitted.untied += [k for k in present[:-1] if not last.equal(state[k])]
        fitted.filled_tied += [k for k in group if k not in state]
        fitted.state.update({k: last for k in group})
    problems = []
    if missing or unexpected:
        problems.append(f"missing keys {missing[:10]}, unexpected keys {unexpected[:10]}")
    if shapes:
        problems.append(f"{len(shapes)} weight(s) of another shape ({'; '.join(shapes[:5])})")
    if problems:
        raise ArgumentError(f"{what} does not fit the model ({type(model).__name__}): " + "; ".join(problems))
    return fitted


def _strip_wrapper(state: Dict[str, Any], own: Dict[str, Any]) -> tuple:
    """``state`` without a wrapper's prefix, when stripping it makes more keys fit; and the prefix."""
    fit = len(state.keys() & own.keys())
    for prefix in WRAPPER_PREFIXES:
        if all(key.startswith(prefix) for key in state):
            stripped = {key[len(prefix) :]: value for key, value in state.items()}
            if len(stripped.keys() & own.keys()) > fit:
                return stripped, prefix
    return state, None


def _tied_groups(own: Dict[str, Any]) -> List[List[str]]:
    """The model's keys grouped by the tensor they name (tied weights share one), in state-dict order."""
    groups: Dict[Any, List[str]] = {}
    for key, tensor in own.items():
        # Tied weights are one tensor under several names: same storage, offset and shape.
        ident = (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype) if tensor.numel() else ("empty", key)
        groups.setdefault(ident, []).append(key)
    return list(groups.values())
