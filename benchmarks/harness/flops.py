"""FLOP accounting for encoder layers, and the machine's measured matrix-multiply throughput.

Model FLOP utilisation (MFU) = FLOPs of the encoder layers / wall time / matmul throughput, where
the throughput is measured in the same run on shapes like the model's own, per shape the faster
of ``torch.matmul`` (MKL on CPU) and oneDNN's linear (:mod:`nlgscore.backend.gemm`, which nlgscore uses
on CPU), so MFU compares a scorer with the best this machine's libraries do, not a datasheet.

Two FLOP counts are reported:

* *useful*: every distinct sentence encoded once, without padding: the work any exact BERTScore
  implementation must do;
* *executed*: what was run, read from the padded shape of every batch entering the encoder
  (padding and duplicates included). For nlgscore's packed forward, whose projections skip the
  padding, this is an upper bound.

Per layer and sequence of length ``L`` (hidden ``H``, feed-forward ``I``), counting a multiply-add
as 2 FLOPs: Q/K/V/O projections ``8·L·H²``, feed-forward ``4·L·H·I``, scores and weighted sum
``4·L²·H``. Layer norms, softmax and GELU are left out (memory-bound, a few % of the time).

>>> layer_flops(1, 10, hidden=4, intermediate=16)
5440
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple


def matmul_shapes(hidden: int, intermediate: int, tokens: int = 2048) -> List[Tuple[int, int, int]]:
    """The matrix products one encoder layer runs on a ``tokens``-token batch."""
    return [(tokens, hidden, hidden), (tokens, hidden, intermediate), (tokens, intermediate, hidden)]


def layer_flops(batch: int, length: int, hidden: int, intermediate: int) -> int:
    """FLOPs of one encoder layer on a ``batch × length`` input (see the module docstring)."""
    tokens = batch * length
    return 8 * tokens * hidden * hidden + 4 * tokens * hidden * intermediate + 4 * batch * length * length * hidden


def encoder_dims(config: Any) -> Tuple[int, int]:
    """``(hidden, intermediate)`` of a transformers encoder config (BERT/RoBERTa or BART names)."""
    hidden = getattr(config, "hidden_size", None) or config.d_model
    intermediate = getattr(config, "intermediate_size", None) or config.encoder_ffn_dim
    return int(hidden), int(intermediate)


def useful_flops(lengths: Iterable[int], num_layers: int, hidden: int, intermediate: int) -> int:
    """FLOPs of encoding each sequence of ``lengths`` once, unpadded, through ``num_layers`` layers."""
    return num_layers * sum(layer_flops(1, n, hidden, intermediate) for n in lengths)


@dataclass
class LayerCount:
    """What the encoder was asked to do while a :func:`count_encoder_batches` block ran."""

    forwards: int = 0
    tokens: int = 0  # batch × length (padding included), summed over forward passes
    flops: int = 0  # ``layers`` encoder layers on each of those padded batches

    def as_dict(self) -> Dict[str, int]:
        return {"forwards": self.forwards, "padded_tokens": self.tokens, "flops": self.flops}


@contextmanager
def count_encoder_batches(hidden: int, intermediate: int, layers: int) -> Iterator[LayerCount]:
    """Count the padded batches entering the encoder inside the block (any library, any model).

    A global forward hook sees the ``*Embeddings`` module (BertEmbeddings, RobertaEmbeddings, ...)
    that starts every forward pass, whichever library runs the model and however it runs the
    layers after it (transformers' own layers, or nlgscore's packed forward), and reads the
    ``(batch, length, hidden)`` shape of its output. It costs a Python call per module call, so
    timed runs are made outside this block.
    """
    import torch

    count = LayerCount()

    def hook(module: Any, args: Tuple[Any, ...], output: Any) -> None:
        if not type(module).__name__.endswith("Embeddings"):
            return
        if not isinstance(output, torch.Tensor) or output.dim() != 3 or output.shape[-1] != hidden:
            return
        batch, length = int(output.shape[0]), int(output.shape[1])
        count.forwards += 1
        count.tokens += batch * length
        count.flops += layers * layer_flops(batch, length, hidden, intermediate)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield count
    finally:
        handle.remove()


def matmul_throughput(
    shapes: Sequence[Tuple[int, int, int]],
    device: str = "cpu",
    dtype: str = "float32",
    repeats: int = 7,
    min_seconds: float = 0.2,
) -> Dict[str, Any]:
    """Best-of-``repeats`` FLOP/s on each ``(m, k, n)`` shape, and their mean (the MFU peak).

    Per shape, ``torch.matmul`` and (on CPU, where available) oneDNN's linear are timed; the
    faster one is the shape's throughput. Each timed sample multiplies long enough
    (``min_seconds``) for timer and thread-wake noise to vanish; the best sample is kept because
    the machine is shared and noise only slows it down.
    """
    import torch

    from nlgscore.backend.gemm import linear, onednn_available

    torch_dtype = getattr(torch, dtype)
    per_shape: List[Dict[str, Any]] = []
    for m, k, n in shapes:
        a = torch.randn(m, k, device=device, dtype=torch_dtype)
        b = torch.randn(k, n, device=device, dtype=torch_dtype)
        flops = 2 * m * k * n
        row: Dict[str, Any] = {"shape": f"({m}x{k})@({k}x{n})"}
        row["matmul_flops_per_s"] = flops / _best_seconds(
            lambda a=a, b=b: torch.matmul(a, b), device, repeats, min_seconds
        )
        if str(device) == "cpu" and onednn_available():
            weight = b.t().contiguous()
            with torch.inference_mode():
                row["onednn_flops_per_s"] = flops / _best_seconds(
                    lambda a=a, weight=weight: linear(a, weight), device, repeats, min_seconds
                )
        row["flops_per_s"] = max(row["matmul_flops_per_s"], row.get("onednn_flops_per_s", 0.0))
        per_shape.append(row)
    peak = sum(s["flops_per_s"] for s in per_shape) / len(per_shape)
    return {"device": device, "dtype": dtype, "shapes": per_shape, "flops_per_s": peak}


def _best_seconds(run: Any, device: str, repeats: int, min_seconds: float) -> float:
    """The fastest per-call time of ``run`` over ``repeats`` samples of about ``min_seconds`` each."""
    _sync(device)
    start = time.perf_counter()
    iters = 0
    while time.perf_counter() - start < 0.05 or iters < 2:  # warm-up and calibration
        run()
        _sync(device)
        iters += 1
    per_call = (time.perf_counter() - start) / iters
    inner = max(1, int(min_seconds / max(per_call, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        for _ in range(inner):
            run()
        _sync(device)
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def mfu(flops: Optional[int], seconds: float, peak_flops_per_s: float) -> Optional[float]:
    """``flops / seconds / peak`` (None when a count is missing)."""
    if not flops or seconds <= 0 or peak_flops_per_s <= 0:
        return None
    return flops / seconds / peak_flops_per_s
