"""Host-to-device copies that do not stop the host.

A copy from ordinary (pageable) host memory to a GPU is synchronous: PyTorch stages it and waits
for the stream, so the host stops until every kernel queued before it has run, and the next
batch's tokenizing and planning cannot overlap the current batch's forward. From page-locked
(pinned) memory with ``non_blocking=True`` the copy is queued on the stream like a kernel; the
caching host allocator keeps the pinned block until the copy has run, so the host tensor may be
dropped at once. Off CUDA a tensor is returned as it is.

>>> import torch
>>> ids = torch.tensor([[2, 5, 3]])
>>> to_device(ids, torch.device("cpu")) is ids
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["to_device"]


def to_device(tensor: Any, device: Any) -> Any:
    """``tensor`` (on the host) on ``device``, queued without a host synchronisation on CUDA."""
    kind = getattr(device, "type", device)
    if kind == "cpu":
        return tensor
    if kind == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)
