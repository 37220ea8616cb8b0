"""Linear layers on CPU through oneDNN instead of the default BLAS (same fp32 arithmetic).

PyTorch's CPU wheels send ``F.linear`` to MKL. On the AMD EPYC (Zen 4) machines of the issue #6
benchmark, oneDNN's linear — the kernel inductor uses for frozen CPU graphs, reached through
``torch.ops.mkldnn._linear_pointwise`` — ran 1.1-1.5x faster on MiniLM/BART layer shapes and
1.7x faster on a 50,265-way LM head, with a fused GELU. It computes the same fp32 products and
sums in another order, so outputs agree to float rounding (~4e-6 on unit-scale outputs, like
MKL's own difference from a float64 product); the golden-file tests hold with it on and off.

Only inference on CPU takes this path (the op has no autograd formula): with gradients enabled, on
another device or with another dtype the plain ``F.linear`` runs. A torch build without the op, or
one whose op disagrees with ``F.linear`` on a probe, falls back on its own.

The gain depends on the CPU: on an Intel Xeon (avx512, no bf16) oneDNN gained nothing over MKL
(2,000 WMT19 pairs, MiniLM L4: 3.07 s with it, 2.97 s without). So when nlgscore loads a model
(:func:`use_onednn_linears`) it times both kernels on that model's linear shapes for a few
milliseconds and keeps the faster (:func:`choose_kernel`); the choice, its timings and the CPU
model are logged and returned by :func:`kernel_choice`. ``NLGSCORE_ONEDNN=1`` forces oneDNN,
``NLGSCORE_ONEDNN=0`` forces MKL (``F.linear``). Both are fp32: the choice never changes a
number beyond float rounding.

>>> import torch
>>> layer = torch.nn.Linear(8, 4)
>>> fast = wrap_linear(layer)
>>> x = torch.randn(3, 8)
>>> with torch.inference_mode():
...     bool((fast(x) - layer(x)).abs().max() < 1e-5)
True
>>> fast.weight is layer.weight  # the parameters are shared, not copied
True
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import time
from typing import Any, Dict, Iterable, Optional, Tuple

logger = logging.getLogger(__name__)

ENV_SWITCH = "NLGSCORE_ONEDNN"
# Activations oneDNN can fuse into the linear, by transformers' ``hidden_act`` name. "gelu" is the
# exact (erf) GELU in both libraries; approximations are left to the model's own function.
FUSED_ACTIVATIONS = {"gelu": ("gelu", "none"), "relu": ("relu", "")}
# oneDNN builds (JIT-compiles) and caches a kernel for every distinct input shape, ~1.3 MB each,
# and that memory is not given back: token-budget batches have a new row count almost every time,
# so 2,000 distinct counts grew the process by 4 GB. Inputs are padded to a multiple of this many
# rows (zero rows, sliced off the output): at most budget/128 shapes per weight shape (MiniLM at
# the 2,048-token default: 16 x 4 weight shapes, ~90 MB, reached early and then flat), for ~3%
# extra rows.
ROW_BUCKET = 128
# The measurement: each distinct weight shape (capped at this many elements, so that a 50k-word LM
# head costs what a 2M-parameter slice of it costs) on PROBE_ROWS rows (the size of a batch under
# the default CPU budget: on a 128-row probe the two kernels tied within noise and the choice
# flipped between loads, while 2,000-pair runs differed by 15%), best of a few runs, within a time
# cap. oneDNN must win by PROBE_MARGIN: it is not PyTorch's default, pads rows to ROW_BUCKET and
# keeps a compiled kernel per shape, so a tie goes to MKL.
PROBE_MAX_WEIGHT = 1 << 21
PROBE_ROWS = 1024
PROBE_RUNS = 3
PROBE_SECONDS = 1.0
PROBE_MARGIN = 1.05
_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")

# The current choice (process-wide: the last model loaded decides); see kernel_choice().
_CHOICE: Dict[str, Any] = {"kernel": None, "reason": "no model loaded yet"}


def _forced() -> Optional[bool]:
    value = os.environ.get(ENV_SWITCH, "").strip().lower()
    return False if value in _OFF else True if value in _ON else None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else :func:`platform.processor`), for reports.

    >>> isinstance(cpu_model(), str)
    True
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def kernel_choice() -> Dict[str, Any]:
    """The CPU linear kernel in use and why: ``kernel`` (``"onednn"``/``"mkl"``), ``reason``,
    the measured ``onednn_ms``/``mkl_ms`` when it was measured, and ``cpu`` (the CPU model).

    >>> {"cpu", "kernel", "reason"} <= set(kernel_choice())
    True
    """
    out = dict(_CHOICE)
    if out["kernel"] is None:
        out["kernel"] = "onednn" if onednn_available() else "mkl"
    out["cpu"] = cpu_model()
    return out


def choose_kernel(shapes: Iterable[Tuple[int, int]]) -> str:
    """Pick the CPU linear kernel for weights of ``shapes`` (``(out, in)``): forced by the
    environment, MKL when oneDNN is unavailable, else the faster of the two on these shapes."""
    forced = _forced()
    if forced is not None or not onednn_available():
        kernel = "onednn" if forced and onednn_available() else "mkl"
        reason = f"forced by {ENV_SWITCH}={os.environ.get(ENV_SWITCH)}" if forced is not None else "oneDNN linear unavailable"
        _CHOICE.clear()
        _CHOICE.update(kernel=kernel, reason=reason)
    else:
        onednn_ms, mkl_ms = _measure(tuple(sorted(set(shapes))))
        kernel = "onednn" if onednn_ms * PROBE_MARGIN < mkl_ms else "mkl"
        _CHOICE.clear()
        _CHOICE.update(kernel=kernel, reason="measured", onednn_ms=round(onednn_ms, 3), mkl_ms=round(mkl_ms, 3))
    logger.info("CPU linear kernel: %s (%s) on %s", kernel, ", ".join(f"{k}={v}" for k, v in _CHOICE.items() if k != "kernel"), cpu_model())
    return kernel


@functools.lru_cache(maxsize=32)
def _measure(shapes: Tuple[Tuple[int, int], ...]) -> Tuple[float, float]:
    """Milliseconds (oneDNN, MKL) for one PROBE_ROWS-row product per weight shape, best of runs."""
    import torch
    import torch.nn.functional as F

    op = torch.ops.mkldnn._linear_pointwise
    totals = [0.0, 0.0]
    deadline = time.perf_counter() + PROBE_SECONDS
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for out_features, in_features in shapes:
            out_features = max(1, min(out_features, PROBE_MAX_WEIGHT // max(in_features, 1)))
            x = torch.randn(PROBE_ROWS, in_features, generator=generator)
            w = torch.randn(out_features, in_features, generator=generator)
            b = torch.zeros(out_features)
            kernels = (lambda: op(x, w, b, "none", [], ""), lambda: F.linear(x, w, b))
            best = [float("inf"), float("inf")]
            for k, run in enumerate(kernels):
                run()  # warm-up: oneDNN compiles a kernel per shape on first use
            for _ in range(PROBE_RUNS):
                for k, run in enumerate(kernels):  # interleaved, so load changes hit both
                    start = time.perf_counter()
                    run()
                    best[k] = min(best[k], time.perf_counter() - start)
            totals[0] += best[0] * 1e3
            totals[1] += best[1] * 1e3
            if time.perf_counter() > deadline:
                break
    return totals[0], totals[1]


@functools.lru_cache(maxsize=None)
def onednn_available() -> bool:
    """True when oneDNN linear can be used here (CPU build has it, env does not force it off,
    probe agrees)."""
    if _forced() is False:
        return False
    try:
        import torch
        import torch.nn.functional as F

        if not torch.backends.mkldnn.is_available():
            return False
        op = torch.ops.mkldnn._linear_pointwise
        generator = torch.Generator().manual_seed(0)
        x, w, b = (torch.randn(shape, generator=generator) for shape in ((5, 24), (7, 24), (7,)))
        with torch.inference_mode():
            agree = bool((op(x, w, b, "none", [], "") - F.linear(x, w, b)).abs().max() < 1e-4)
    except (AttributeError, RuntimeError) as err:  # op missing from this build, or unsupported CPU
        logger.info("oneDNN linear unavailable, using F.linear: %s", err)
        return False
    if not agree:
        logger.warning("oneDNN linear disagrees with F.linear on a probe; using F.linear")
    return agree


def _fast_path(x: Any, weight: Any) -> bool:
    import torch

    return (
        x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and x.dtype == weight.dtype
        # bf16: oneDNN has no bf16 inner product on CPUs without native bf16 (it raises)
        and x.dtype == torch.float32
        and _onednn_chosen()
    )


def _onednn_chosen() -> bool:
    """oneDNN where the last model load chose it by measurement (or the environment forced it);
    before any model is loaded, wherever it is available. The direct :func:`linear` calls of the
    packed encoder and the LM head follow the choice too, not only the swapped modules."""
    if _forced() is not None:
        return onednn_available()  # False when forced off
    kernel = _CHOICE.get("kernel")
    return onednn_available() if kernel is None else kernel == "onednn"


def bucketed_rows(rows: int, x: Any, weight: Any) -> int:
    """The row count :func:`linear` runs ``x @ weight.T`` with: ``rows`` rounded up to a multiple of
    :data:`ROW_BUCKET` on the oneDNN path, ``rows`` elsewhere. A caller whose inputs already have
    that many rows (see ``packed_encoder``) saves :func:`linear` a padded copy per call.
    """
    return _round_up(rows) if _fast_path(x, weight) else rows


def _round_up(rows: int) -> int:
    return -(-rows // ROW_BUCKET) * ROW_BUCKET


def linear(x: Any, weight: Any, bias: Optional[Any] = None, activation: Optional[str] = None) -> Any:
    """``act(F.linear(x, weight, bias))``, by oneDNN where :func:`_fast_path` allows.

    ``activation`` is a key of :data:`FUSED_ACTIVATIONS` (fused on the fast path) or None.
    """
    import torch
    import torch.nn.functional as F

    if activation is not None and activation not in FUSED_ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(FUSED_ACTIVATIONS)} or None, got {activation!r}")
    if _fast_path(x, weight):
        attr, algorithm = FUSED_ACTIVATIONS[activation] if activation else ("none", "")
        rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
        bucket = _round_up(rows)
        if bucket == rows:  # also the empty input
            return torch.ops.mkldnn._linear_pointwise(x, weight, bias, attr, [], algorithm)
        padded = x.new_zeros(bucket, x.shape[-1])
        padded[:rows] = x.reshape(rows, x.shape[-1])
        out = torch.ops.mkldnn._linear_pointwise(padded, weight, bias, attr, [], algorithm)
        return out[:rows].view(*x.shape[:-1], weight.shape[0])
    out = F.linear(x, weight, bias)
    if activation == "gelu":
        return F.gelu(out)
    if activation == "relu":
        return F.relu(out)
    return out


@functools.lru_cache(maxsize=None)
def _linear_class() -> Any:
    """The ``nn.Linear`` subclass, built on first use so that importing nlgscore does not import torch."""
    import torch

    class OneDNNLinear(torch.nn.Linear):
        """An ``nn.Linear`` whose inference forward runs through :func:`linear`."""

        def forward(self, x: Any) -> Any:
            return linear(x, self.weight, self.bias)

    # Importable as nlgscore.core.gemm.OneDNNLinear (module __getattr__ below), so models pickle.
    OneDNNLinear.__module__, OneDNNLinear.__qualname__ = __name__, "OneDNNLinear"
    return OneDNNLinear


def __getattr__(name: str) -> Any:
    if name == "OneDNNLinear":
        return _linear_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def wrap_linear(layer: Any) -> Any:
    """An ``nn.Linear`` subclass instance sharing ``layer``'s parameters, with the oneDNN forward."""
    import torch

    new = _linear_class().__new__(_linear_class())
    torch.nn.Module.__init__(new)
    new.in_features, new.out_features = layer.in_features, layer.out_features
    new.weight = layer.weight
    new.bias = layer.bias
    new.train(layer.training)
    return new


def use_onednn_linears(model: Any) -> int:
    """Swap every plain ``nn.Linear`` of ``model`` (in place) for :func:`wrap_linear`; returns the count.

    Meant for models nlgscore loads itself for scoring; state dicts, tied weights and devices are
    unchanged. The kernel is chosen first (:func:`choose_kernel` on the model's linear shapes):
    nothing is swapped when MKL is chosen or oneDNN is unavailable.
    """
    import torch

    shapes = [tuple(m.weight.shape) for m in model.modules() if isinstance(m, torch.nn.Linear) and m.weight.dim() == 2]
    if not shapes or choose_kernel(shapes) != "onednn":
        return 0
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear:
                setattr(parent, name, wrap_linear(child))
                swapped += 1
    return swapped
