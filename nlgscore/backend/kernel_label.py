"""The signature's ``kernel`` field: which kernels set a model metric's last bits on its device.

On CPU the linear kernel, ``onednn`` or ``mkl``: the model's own (:func:`nlgscore.backend.gemm.model_kernel`,
a scorer's ``kernel=``), else the last load's (:func:`nlgscore.backend.gemm.kernel_choice`); on
CUDA ``cuda[-tf32][-cudnnattn]`` (:func:`nlgscore.backend.cuda_kernels.signature_label`). Elsewhere
(``meta``, ``mps``) no field. Two equal signatures on one machine family mean equal bits.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from nlgscore.backend.cuda_kernels import signature_label
from nlgscore.backend.gemm import KERNEL_DTYPES, kernel_choice, model_kernel

__all__ = ["kernel_field"]


def kernel_field(device: Any, dtype: Any, model: Optional[Any] = None) -> Dict[str, str]:
    """``{"kernel": "onednn"|"mkl"}`` for a model on ``device`` in ``dtype`` (a signature field:
    the kernel changes the last bits); on CUDA :func:`nlgscore.backend.cuda_kernels.signature_label`;
    ``{}`` elsewhere (``meta``, ``mps``). ``model``: the scorer's loaded model, whose own kernel
    is the answer on CPU (None, or a model no load chose for: the last load's in ``dtype``).

    >>> import torch
    >>> kernel_field(torch.device("cpu"), torch.float32)["kernel"] in ("onednn", "mkl"), kernel_field(torch.device("meta"), torch.float32)
    (True, {})
    >>> kernel_field(torch.device("cuda"), torch.bfloat16)  # read from settings: no GPU needed
    {'kernel': 'cuda'}
    """
    kind = getattr(device, "type", str(device))
    if kind == "cuda":
        return {"kernel": signature_label(dtype)}
    if kind != "cpu":
        return {}
    name = str(dtype).replace("torch.", "")
    if name not in KERNEL_DTYPES:
        return {"kernel": "mkl"}  # float16: F.linear
    own = model_kernel(model) if model is not None else None
    return {"kernel": own or kernel_choice(name)["kernel"]}
