"""oneDNN's blocked copy of a linear layer's weight, made once and kept beside the weight.

Given a plain (row-major) weight, ``torch.ops.mkldnn._linear_pointwise`` reorders it into
oneDNN's blocked layout at every product: ~0.5 ms for a 3,072 x 768 fp32 weight, which is 25-30%
of a 32-row product (a single-sample reward call) and 0-5% of a 256-row one. The reordered copy
(``torch.ops.mkldnn._reorder_linear_weight``) gives the same bits for every row count, dtype and
thread count measured (``tests/backend/test_fast_paths.py``), so :func:`packed` keeps one per
weight and hands it to the product instead.

The copies cost memory beside the weights themselves (the plain weight stays: the MKL path, a
``state_dict`` and pickling need it), so they are made for at most :data:`PACKED_BYTES_MAX` bytes
of weights per process, first come first served (MiniLM's 4 layers take 28 MB; a Prism-sized model
would take 3 GB): a weight beyond the cap runs unpacked, with the same bits. A copy is dropped with
its weight, and made again when the weight changes in place (its version counter moves).

>>> import torch
>>> weight = torch.randn(8, 16)
>>> packed(weight) is packed(weight), packed_bytes() >= 8 * 16 * 4
(True, True)
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Dict, Tuple

__all__ = ["PACKED_BYTES_MAX", "packed", "packed_bytes"]

PACKED_BYTES_MAX = 512 << 20  # bytes of weights that get a packed copy, per process

# id(weight) -> (a weak reference to it, its (version, data pointer) when packed, the copy, bytes)
_COPIES: Dict[int, Tuple[Any, Tuple[int, int], Any, int]] = {}
_BYTES = [0]  # bytes of the weights in _COPIES, kept with it (a cap check on every product must not sum them)
_LOCK = threading.RLock()  # re-entrant: a garbage collection inside it may run _drop


def packed(weight: Any) -> Any:
    """oneDNN's blocked copy of ``weight`` (a CPU float32/bfloat16 tensor), made on first use; the
    weight itself when it cannot be packed or the cap is reached."""
    import torch

    try:
        key = (weight._version, weight.data_ptr())
    except RuntimeError:  # an inference-mode tensor has no version counter: it cannot change in place unseen
        key = (-1, weight.data_ptr())
    wid = id(weight)
    entry = _COPIES.get(wid)
    if entry is not None and entry[0]() is weight and entry[1] == key:
        return entry[2]
    size = weight.numel() * weight.element_size()
    if entry is None and _BYTES[0] + size > PACKED_BYTES_MAX:  # over the cap: unpacked, nothing locked
        return weight
    try:
        with torch.inference_mode():
            copy = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), None)
    except (AttributeError, RuntimeError):  # a torch build without the op: the plain weight
        return weight
    with _LOCK:
        old = _COPIES.get(wid)
        if old is None and _BYTES[0] + size > PACKED_BYTES_MAX:  # another thread filled the cap meanwhile
            return weight
        _COPIES[wid] = (weakref.ref(weight, functools.partial(_drop, wid)), key, copy, size)
        _BYTES[0] += size - (old[3] if old is not None else 0)
    return copy


def _drop(wid: int, _reference: Any = None) -> None:
    """The weight ``wid`` is gone: its copy too (called by its weak reference, with it)."""
    with _LOCK:
        entry = _COPIES.pop(wid, None)
        if entry is not None:
            _BYTES[0] -= entry[3]


def packed_bytes() -> int:
    """Bytes of weights that have a packed copy now (the copies take about as much)."""
    return _BYTES[0]
