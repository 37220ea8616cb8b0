"""The signature's ``kernel`` field: which kernels set a model metric's last bits on its device.

On CPU the linear kernel, ``onednn`` or ``mkl`` (:func:`nlgscore.backend.gemm.kernel_choice`); on
CUDA ``cuda[-tf32][-cudnnattn]`` (:func:`nlgscore.backend.cuda_kernels.signature_label`). Elsewhere
(``meta``, ``mps``) no field. Two equal signatures on one machine family mean equal bits.
"""

from __future__ import annotations

from typing import Any, Dict

from nlgscore.backend.cuda_kernels import signature_label
from nlgscore.backend.gemm import KERNEL_DTYPES, kernel_choice

__all__ = ["kernel_field"]


def kernel_field(device: Any, dtype: Any) -> Dict[str, str]:
    """``{"kernel": "onednn"|"mkl"}`` for a model on ``device`` in ``dtype`` (a signature field:
    the kernel changes the last bits); on CUDA :func:`nlgscore.backend.cuda_kernels.signature_label`;
    ``{}`` elsewhere (``meta``, ``mps``).

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
    return {"kernel": kernel_choice(name)["kernel"] if name in KERNEL_DTYPES else "mkl"}  # float16: F.linear
