"""CUDA forwards: PyTorch's SDPA without cuDNN attention, and the signature label of their kernels.

cuDNN's SDPA builds an execution graph for every new (batch, length) shape, hundreds of
milliseconds each (sglang PR #4650 measured ~400 ms; MLX PR #2743 keeps it off for inference for
that reason). PyTorch 2.11 ranks it first for bf16 on Hopper. A scoring call meets a new shape at
almost every length-sorted batch, and a reward server at almost every single-sample call. On the
H200 (BENCHMARKS.md "GPU"), a bf16 BERTScore call kept the GPU busy 7% of its wall time, and bf16 MBR ran
7x slower than fp32. Flash and memory-efficient attention have no per-shape set-up.

``NLGSCORE_CUDNN_ATTENTION=1`` lets SDPA choose cuDNN again (read at each forward: a long-running
job of fixed shapes may prefer it). CPU forwards are untouched.

The signature's ``kernel`` field on CUDA (:func:`signature_label`) is ``cuda``, with ``-tf32``
when float32 products run as TF32 and ``-cudnnattn`` when cuDNN attention is allowed: both move
scores (TF32 by up to 1.1e-4 on the H200, BENCHMARKS.md "GPU").

>>> import torch
>>> with forward_attention(torch.device("cpu")):  # a no-op off CUDA
...     torch.nn.functional.scaled_dot_product_attention(*[torch.ones(1, 1, 2, 4)] * 3).shape
torch.Size([1, 1, 2, 4])
>>> cuda_backends(allow_cudnn=False)
('FLASH_ATTENTION', 'EFFICIENT_ATTENTION', 'MATH')
>>> signature_label(torch.bfloat16)  # read from settings: no GPU needed
'cuda'
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Tuple

from nlgscore import envs

ENV_SWITCH = envs.CUDNN_ATTENTION.name
# In the order SDPA tries them; MATH last, so every input still has a kernel.
_CUDA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")
# SDPA's backend flags are process-global, and scorers run in threads (the server, Ray actors): the
# first forward in sets them, the last one out restores what was there, so overlapping forwards
# never restore each other's state half-way.
_LOCK = threading.Lock()
_INSIDE: Dict[str, Any] = {"forwards": 0, "undo": None}  # forwards inside now; what restores the flags


def cudnn_allowed() -> bool:
    """Whether ``NLGSCORE_CUDNN_ATTENTION=1`` lets SDPA pick cuDNN attention on CUDA."""
    return bool(envs.CUDNN_ATTENTION.get())


def cuda_backends(allow_cudnn: bool) -> Tuple[str, ...]:
    """The SDPA backends a CUDA forward may use (names of ``torch.nn.attention.SDPBackend``)."""
    return ("CUDNN_ATTENTION",) + _CUDA_BACKENDS if allow_cudnn else _CUDA_BACKENDS


@contextmanager
def forward_attention(device: Any) -> Iterator[None]:
    """Inside the block, SDPA on CUDA chooses among :func:`cuda_backends`; elsewhere nothing changes."""
    if getattr(device, "type", device) != "cuda" or cudnn_allowed():
        yield
        return
    with _LOCK:
        if _INSIDE["forwards"] == 0:
            _INSIDE["undo"] = _restrict()
        _INSIDE["forwards"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _INSIDE["forwards"] -= 1
            if _INSIDE["forwards"] == 0:
                undo, _INSIDE["undo"] = _INSIDE["undo"], None
                undo()


def _restrict() -> Any:
    """Set the CUDA backends of :func:`cuda_backends` (in that priority); return the undo."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    context = sdpa_kernel([getattr(SDPBackend, name) for name in cuda_backends(False)], set_priority=True)
    context.__enter__()
    return lambda: context.__exit__(None, None, None)


def signature_label(dtype: Any) -> str:
    """``cuda[-tf32][-cudnnattn]``: what, besides the model and settings, sets a CUDA forward's bits."""
    import torch

    tf32 = dtype == torch.float32 and (
        torch.get_float32_matmul_precision() != "highest" or torch.backends.cuda.matmul.allow_tf32
    )
    return "cuda" + ("-tf32" if tf32 else "") + ("-cudnnattn" if cudnn_allowed() else "")
