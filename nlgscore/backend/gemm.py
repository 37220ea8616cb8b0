"""Linear layers on CPU through oneDNN instead of the default BLAS (same fp32 arithmetic).

PyTorch's CPU wheels send ``F.linear`` to MKL. On an AMD EPYC (Zen 4) in the BERTScore
benchmark, oneDNN's linear — the kernel inductor uses for frozen CPU graphs, reached through
``torch.ops.mkldnn._linear_pointwise`` — ran 1.1-1.5x faster on MiniLM/BART layer shapes and
1.7x faster on a 50,265-way LM head, with a fused GELU. It computes the same fp32 products and
sums in another order, so outputs agree to float rounding (~4e-6 on unit-scale outputs, like
MKL's own difference from a float64 product); the golden-file tests hold with it on and off.

Only inference on CPU takes this path (the op has no autograd formula): with gradients enabled, on
another device or in float16 the plain ``F.linear`` runs. A torch build without the op, or one
whose op disagrees with ``F.linear`` on a probe, falls back on its own.

bfloat16 models (``dtype="bfloat16"``) get their own choice, measured in bfloat16 on their own
shapes: on the Zen 4 CPU (native ``avx512_bf16``) oneDNN's bf16 inner product ran about 2x faster
than its fp32 one and 1.5-2x faster than ``F.linear`` in bf16. On a CPU without native bf16 the
probe of the bf16 op fails or loses and ``F.linear`` runs. A float32 and a bfloat16 model in one
process keep their own choices. :func:`measure_dtypes` gives ``dtype="auto"``
(:mod:`nlgscore.core.runtime`) the float32 and bfloat16 times of a model's shapes.

The gain depends on the CPU: on an Intel Xeon (avx512, no bf16) oneDNN gained nothing over MKL
(2,000 WMT19 pairs, MiniLM L4: 3.07 s with it, 2.97 s without), and on an Intel Xeon with AMX a
load-time race timed them at 15.63 and 15.52 ms, so a timed choice flipped between loads, and
the last bits of every score with it. The kernel is therefore chosen by a fixed rule
on the CPU (:func:`choose_kernel`): oneDNN for bfloat16 where the CPU does bf16 natively, oneDNN
for float32 on AMD CPUs (where it measured 1.1-1.5x faster), MKL otherwise. The same machine
always gets the same kernel; the choice is logged, returned by :func:`kernel_choice` and
recorded in every model metric's signature (``kernel:onednn|mkl``, :mod:`nlgscore.backend.kernel_label`). A scorer's
``kernel="onednn"``/``"mkl"`` picks one; its default, ``"auto"``, reads ``NLGSCORE_ONEDNN``
(:data:`nlgscore.envs.ONEDNN`: 1 oneDNN, 0 MKL, unset the rule). The two sum in different orders:
fp32 scores differ across kernels by float rounding (bound measured in docs/metrics/bertscore.md, "Same bits").

**Per model.** The kernel is chosen when a model loads (:func:`use_onednn_linears`) and kept with
that model (:func:`model_kernel`), so two scorers of one process, or of one dtype, keep their own
kernels and their own bits: the swapped linears, the packed encoder's and the token forwards'
products and the LM head all run the kernel of the model they belong to. :func:`pin_kernel`
moves a loaded model to another kernel (a resumed run takes the kernel its first part ran on).

**Batch invariance.** A row's output must not depend on how many rows share its product. Both
kernels give every row the bits of a large product from :data:`~nlgscore.backend.product_rows.MIN_ROWS` rows up, but MKL takes
another path for 1-7 rows and oneDNN for 1 (measured up to 5e-8 apart); so every product runs on
at least ``MIN_ROWS`` rows (zero rows added and sliced off), and oneDNN on a multiple of
``MIN_ROWS`` rows, as a multiple of ``ROW_BUCKET`` rows and a shorter tail (:mod:`nlgscore.backend.product_rows`).

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
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from nlgscore import envs
from nlgscore.backend.kernel_cache import cpu_model, cpu_vendor
from nlgscore.backend.packed_weights import packed
from nlgscore.backend.product_rows import MIN_ROWS, product_rows, segments
from nlgscore.errors import ArgumentError

logger = logging.getLogger(__name__)

ENV_SWITCH = envs.ONEDNN.name
# The CPU linear kernels (the signature's kernel: field on CPU), and what a scorer's kernel= takes.
KERNELS = ("onednn", "mkl")
KERNEL_CHOICES = ("auto",) + KERNELS
# Activations oneDNN can fuse into the linear, by transformers' ``hidden_act`` name. "gelu" is the
# exact (erf) GELU in both libraries; approximations are left to the model's own function.
FUSED_ACTIVATIONS = {"gelu": ("gelu", "none"), "relu": ("relu", "")}
# The dtype measurement (dtype="auto"): each distinct weight shape (capped at this many elements,
# so that a 50k-word LM head costs what a 2M-parameter slice of it costs) on PROBE_ROWS rows (the
# size of a batch under the default CPU budget), best of a few runs, within a time cap.
PROBE_MAX_WEIGHT = 1 << 21
PROBE_ROWS = 1024
PROBE_RUNS = 3
PROBE_SECONDS = 1.0
# dtype="auto" (measure_dtypes) takes the best of more runs: its answer changes scores, and on a
# busy 2-core machine best-of-3 picked float32 in about one cold load of three.
DTYPE_PROBE_RUNS = 6
# Dtypes with a oneDNN path, and how far (relative to the largest output) the op may differ from
# F.linear on the availability probe: float rounding of the output in that dtype.
KERNEL_DTYPES = {"float32": 1e-5, "bfloat16": 2e-2}
# CPU flags (``/proc/cpuinfo``) of native bf16 arithmetic; without them oneDNN emulates bf16. Read
# here, by the kernel choice and by dtype="auto" (nlgscore.core.runtime), which imports this module.
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")

# The current choice per dtype (process-wide: the last model loaded in that dtype decides); see kernel_choice().
_CHOICE: Dict[str, Any] = {"kernel": None, "reason": "no model loaded yet"}
_CHOICES: Dict[str, Dict[str, Any]] = {
    "float32": _CHOICE,
    "bfloat16": {"kernel": None, "reason": "no bfloat16 model loaded yet"},
}
# A model's kernel is an attribute of the model, so that it travels with it (a scorer pickled into
# datasets' or Ray's workers keeps its kernel= there); the models pinned in this process are kept
# weakly, for loaded_models_on().
KERNEL_ATTRIBUTE = "nlgscore_kernel"
_PINNED: "weakref.WeakSet[Any]" = weakref.WeakSet()
_PIN_LOCK = threading.Lock()  # one re-pinning at a time: it swaps a model's modules


def _forced() -> Optional[bool]:
    """True/False where ``NLGSCORE_ONEDNN`` forces oneDNN/MKL, else None (a bad value is an
    error naming the variable, :data:`nlgscore.envs.ONEDNN`)."""
    return envs.ONEDNN.get()


def check_kernel(kernel: Any) -> str:
    """``kernel`` if it is one of :data:`KERNEL_CHOICES`; else an error naming the option.

    Args:
        kernel: A scorer's ``kernel=`` (``"auto"``, ``"onednn"`` or ``"mkl"``).

    Returns:
        ``kernel``.

    Raises:
        ArgumentError: Any other value.

    Example:
        >>> check_kernel("mkl")
        'mkl'
    """
    if kernel not in KERNEL_CHOICES:
        raise ArgumentError(f"kernel must be one of {', '.join(KERNEL_CHOICES)}, got {kernel!r}")
    return kernel


def kernel_choice(dtype: str = "float32") -> Dict[str, Any]:
    """The CPU linear kernel in use for ``dtype`` models and why: ``kernel`` (``"onednn"``/``"mkl"``),
    ``reason``, the measured ``onednn_ms``/``mkl_ms`` when it was measured, and ``cpu`` (the CPU model).

    >>> {"cpu", "kernel", "reason"} <= set(kernel_choice()) and kernel_choice("bfloat16")["kernel"] in ("onednn", "mkl")
    True
    """
    out = dict(_CHOICES[dtype])
    if out["kernel"] is None:
        out["kernel"] = "onednn" if _onednn_chosen(dtype) else "mkl"
    out["cpu"] = cpu_model()
    return out


def choose_kernel(shapes: Iterable[Tuple[int, int]], dtype: str = "float32", kernel: str = "auto") -> str:
    """Pick the CPU linear kernel for ``dtype`` weights (``shapes``, ``(out, in)``, are logged only).

    Never timed, so two loads on one machine always agree.

    Args:
        shapes: The model's linear weight shapes (logged).
        dtype: The model's dtype (``"float32"`` or ``"bfloat16"``).
        kernel: ``"onednn"``/``"mkl"``: that kernel (MKL where oneDNN is unavailable in
            ``dtype``); ``"auto"``: forced by ``NLGSCORE_ONEDNN``, else MKL when oneDNN is
            unavailable, else the fixed rule of :func:`kernel_rule`.

    Returns:
        ``"onednn"`` or ``"mkl"``; :func:`kernel_choice` reports it and why, as the last load's.

    Raises:
        ArgumentError: ``kernel`` is not one of :data:`KERNEL_CHOICES`, or ``NLGSCORE_ONEDNN``
            has a bad value.
    """
    asked = check_kernel(kernel)
    available = onednn_available(dtype)
    if asked != "auto":
        kernel = asked if available or asked == "mkl" else "mkl"
        reason = f"kernel={asked!r}" + ("" if kernel == asked else ", oneDNN linear unavailable")
    else:
        forced = _forced()
        if forced is not None or not available:
            kernel = "onednn" if forced and available else "mkl"
            reason = (
                f"forced by {ENV_SWITCH}={envs.ONEDNN.raw()}" if forced is not None else "oneDNN linear unavailable"
            )
        else:
            kernel, reason = kernel_rule(dtype)
    choice = _CHOICES[dtype]
    choice.clear()
    choice.update(kernel=kernel, reason=reason)
    logger.info(
        "CPU linear kernel for %s: %s (%s) on %s, %d weight shapes",
        dtype,
        kernel,
        reason,
        cpu_model(),
        len(set(shapes)),
    )
    return kernel


def kernel_rule(dtype: str = "float32") -> Tuple[str, str]:
    """The kernel a CPU gets for ``dtype`` where oneDNN is available, and why: oneDNN in bfloat16
    (available only with native bf16) and on AMD CPUs, MKL in float32 elsewhere.

    >>> kernel_rule("float32")[0] in ("onednn", "mkl")
    True
    """
    if dtype == "bfloat16":
        return "onednn", "rule: native bf16"
    if cpu_vendor() == "AuthenticAMD":
        return "onednn", "rule: float32 on an AMD CPU"
    return "mkl", f"rule: float32 on a {cpu_vendor() or 'non-AMD'} CPU"


def measure_dtypes(shapes: Iterable[Tuple[int, int]]) -> Dict[str, float]:
    """Milliseconds of the linears of ``shapes`` in float32 and in bfloat16, each with its faster
    available kernel (the same probe as :func:`choose_kernel`; for ``dtype="auto"``)."""
    timings = _measure(tuple(sorted(set(shapes))), tuple(KERNEL_DTYPES), DTYPE_PROBE_RUNS)
    return {dtype: min(onednn_ms, mkl_ms) for dtype, (onednn_ms, mkl_ms) in timings.items()}


def linear_shapes(model: Any) -> List[Tuple[int, int]]:
    """The ``(out, in)`` weight shapes of ``model``'s ``nn.Linear`` layers."""
    import torch

    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.weight.dim() == 2]
    return [(int(m.weight.shape[0]), int(m.weight.shape[1])) for m in linears]


@functools.lru_cache(maxsize=32)
def _measure(
    shapes: Tuple[Tuple[int, int], ...], dtypes: Tuple[str, ...] = ("float32",), runs: int = PROBE_RUNS
) -> Dict[str, Tuple[float, float]]:
    """:func:`_measure_now`, or its answer for this CPU, torch and shapes kept on disk by an earlier
    process (:mod:`nlgscore.backend.kernel_cache`: measured once per machine and model)."""
    import torch

    from nlgscore.backend import kernel_cache

    cpu = kernel_cache.cpu_identity()
    available = tuple(onednn_available(dtype) for dtype in dtypes)
    probe = (PROBE_ROWS, PROBE_MAX_WEIGHT, PROBE_SECONDS, available)
    key = kernel_cache.measurement_key(
        shapes, dtypes, runs, cpu, f"{torch.__version__} threads={torch.get_num_threads()}", probe
    )
    kept = kernel_cache.load(key)
    if kept is not None and set(kept) == set(dtypes):
        logger.info("CPU linear timings from the kernel cache (%s)", key[:12])
        return kept
    timings = _measure_now(shapes, dtypes, runs)
    kernel_cache.store(key, timings, {"cpu": cpu[0], "torch": torch.__version__, "shapes": [list(s) for s in shapes]})
    return timings


def _measure_now(
    shapes: Tuple[Tuple[int, int], ...], dtypes: Tuple[str, ...], runs: int
) -> Dict[str, Tuple[float, float]]:
    """Per dtype, milliseconds (oneDNN, MKL) for one PROBE_ROWS-row product per weight shape, best
    of runs (oneDNN: inf where it is unavailable in that dtype). Every dtype and kernel is timed on
    the same shapes (the time cap, PROBE_SECONDS per dtype, ends the loop between shapes)."""
    import torch
    import torch.nn.functional as F

    op = torch.ops.mkldnn._linear_pointwise
    totals = {dtype: [0.0 if onednn_available(dtype) else float("inf"), 0.0] for dtype in dtypes}  # [oneDNN, MKL]
    deadline = time.perf_counter() + PROBE_SECONDS * len(dtypes)
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for out_features, in_features in shapes:
            out_features = max(1, min(out_features, PROBE_MAX_WEIGHT // max(in_features, 1)))
            x32 = torch.randn(PROBE_ROWS, in_features, generator=generator)
            w32 = torch.randn(out_features, in_features, generator=generator)
            kernels = []  # (dtype, 0 for oneDNN / 1 for MKL, run)
            for dtype in dtypes:
                x, w = x32.to(getattr(torch, dtype)), w32.to(getattr(torch, dtype))
                b = torch.zeros(out_features, dtype=x.dtype)
                if onednn_available(dtype):
                    kernels.append((dtype, 0, functools.partial(op, x, w, b, "none", [], "")))
                kernels.append((dtype, 1, functools.partial(F.linear, x, w, b)))
            best = [float("inf")] * len(kernels)
            for _, _, run in kernels:
                run()  # warm-up: oneDNN compiles a kernel per shape on first use
            for _ in range(runs):
                for k, (_, _, run) in enumerate(kernels):  # interleaved, so load changes hit all
                    start = time.perf_counter()
                    run()
                    best[k] = min(best[k], time.perf_counter() - start)
            for (dtype, kind, _), seconds in zip(kernels, best, strict=True):
                totals[dtype][kind] += seconds * 1e3
            if time.perf_counter() > deadline:
                break
    return {dtype: (values[0], values[1]) for dtype, values in totals.items()}


@functools.lru_cache(maxsize=None)
def cpu_native_bf16() -> bool:
    """True when this CPU does bf16 arithmetic natively (a flag of :data:`NATIVE_BF16_FLAGS` in
    ``/proc/cpuinfo``) and torch's oneDNN can use it; False when unknown (not Linux).

    >>> isinstance(cpu_native_bf16(), bool)
    True
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = {word for line in handle if line.startswith("flags") for word in line.split(":", 1)[1].split()}
    except OSError:
        return False
    if not flags & set(NATIVE_BF16_FLAGS):
        return False
    import torch

    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


@functools.lru_cache(maxsize=None)
def onednn_available(dtype: str = "float32") -> bool:
    """True when oneDNN linear can be used here in ``dtype`` (CPU build has it, probe agrees;
    bfloat16 also needs a CPU with native bf16, else oneDNN emulates it). Whether it is *chosen*
    is :func:`choose_kernel`'s answer (``NLGSCORE_ONEDNN=0`` turns it off there)."""
    if dtype not in KERNEL_DTYPES:
        return False
    try:
        import torch
        import torch.nn.functional as F

        if not torch.backends.mkldnn.is_available():
            return False
        if dtype == "bfloat16":
            if not cpu_native_bf16():
                return False
        op = torch.ops.mkldnn._linear_pointwise
        generator = torch.Generator().manual_seed(0)
        x, w, b = (
            torch.randn(shape, generator=generator).to(getattr(torch, dtype)) for shape in ((5, 24), (7, 24), (7,))
        )
        with torch.inference_mode():
            expected = F.linear(x, w, b).float()
            agree = bool(
                (op(x, w, b, "none", [], "").float() - expected).abs().max()
                <= KERNEL_DTYPES[dtype] * (1 + expected.abs().max())
            )
    except (AttributeError, RuntimeError) as err:  # op missing from this build, or unsupported CPU
        logger.info("oneDNN linear unavailable in %s, using F.linear: %s", dtype, err)
        return False
    if not agree:
        logger.warning("oneDNN linear disagrees with F.linear on a %s probe; using F.linear", dtype)
    return agree


def _fast_path(x: Any, weight: Any, kernel: Optional[str] = None) -> bool:
    import torch

    return (
        x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and x.dtype == weight.dtype
        and x.dtype in (torch.float32, torch.bfloat16)  # float16: no oneDNN choice, F.linear
        and _onednn_chosen(str(x.dtype).replace("torch.", ""), kernel)
    )


def _onednn_chosen(dtype: str = "float32", kernel: Optional[str] = None) -> bool:
    """oneDNN where ``kernel`` (a model's, :func:`model_kernel`) is ``"onednn"``. Without one (a
    product outside any loaded model): where the environment forces it, else where the last
    model load in ``dtype`` chose it; before any such load, wherever it is available."""
    if kernel is not None:
        return kernel == "onednn" and onednn_available(dtype)
    forced = _forced()
    if forced is not None:
        return forced and onednn_available(dtype)
    return _CHOICES[dtype].get("kernel") in (None, "onednn") and onednn_available(dtype)


def bucketed_rows(rows: int, x: Any, weight: Any, kernel: Optional[str] = None) -> int:
    """The row count :func:`linear` runs ``x @ weight.T`` with: ``rows`` rounded up to a multiple of
    :data:`MIN_ROWS` on the oneDNN path (:func:`~nlgscore.backend.product_rows.product_rows`), at
    least :data:`MIN_ROWS` on MKL for CPU inference, ``rows`` elsewhere. A caller whose inputs
    already have that many rows (see ``packed_encoder``)
    saves :func:`linear` a padded copy per call. ``kernel``: as :func:`linear`'s.
    """
    if _fast_path(x, weight, kernel):
        return product_rows(rows)
    return max(rows, MIN_ROWS) if _invariant_path(x, weight) else rows


def row_segments(rows: int, x: Any, weight: Any, kernel: Optional[str] = None) -> List[Tuple[int, int]]:
    """The ``(start, stop)`` row ranges :func:`linear` runs a product of ``rows`` rows (a
    :func:`bucketed_rows` count) in: a head of whole :data:`ROW_BUCKET` blocks and a tail on the
    oneDNN path, else one range. A caller that keeps its rows in these segments, and hands
    :func:`linear` one segment at a time, gets the same bits without the copy that joins the
    two outputs (7-13% of a split product's time at 400-2,064 rows, BENCHMARKS.md "Serving").
    ``kernel``: as :func:`linear`'s.
    """
    return segments(rows) if _fast_path(x, weight, kernel) else [(0, rows)]


def _invariant_path(x: Any, weight: Any) -> bool:
    """CPU inference in float32/bfloat16: where the row count is padded (``MIN_ROWS``)."""
    import torch

    return (
        x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and x.dtype == weight.dtype
        and x.dtype in (torch.float32, torch.bfloat16)
    )


def linear(
    x: Any, weight: Any, bias: Optional[Any] = None, activation: Optional[str] = None, kernel: Optional[str] = None
) -> Any:
    """``act(F.linear(x, weight, bias))``, by oneDNN where :func:`_fast_path` allows.

    ``activation`` is a key of :data:`FUSED_ACTIVATIONS` (fused on the fast path) or None.
    ``kernel``: the kernel of the model ``weight`` belongs to (:func:`model_kernel`); None for a
    product outside a loaded model, which follows the environment and the last load.
    """
    import torch
    import torch.nn.functional as F

    if activation is not None and activation not in FUSED_ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(FUSED_ACTIVATIONS)} or None, got {activation!r}")
    if _fast_path(x, weight, kernel):
        attr, algorithm = FUSED_ACTIVATIONS[activation] if activation else ("none", "")
        width = x.shape[-1]
        rows = x.numel() // width if width else 0
        padded_rows = product_rows(rows)
        flat = x.reshape(rows, width) if rows else x
        if padded_rows != rows:
            flat = torch.cat([flat, flat.new_zeros(padded_rows - rows, width)])
        blocked = packed(weight)  # oneDNN's layout, kept: not reordered at every product
        # One product of a bucketed shape (also the empty input), or a multiple of ROW_BUCKET rows
        # then the tail, joined (each row's bits do not depend on its product; row_segments avoids the join)
        ranges = segments(padded_rows)
        inputs = [flat] if len(ranges) == 1 else [flat[a:b] for a, b in ranges]
        outs = [torch.ops.mkldnn._linear_pointwise(part, blocked, bias, attr, [], algorithm) for part in inputs]
        out = outs[0] if len(outs) == 1 else torch.cat(outs)
        return (out if padded_rows == rows else out[:rows]).view(*x.shape[:-1], weight.shape[0])
    rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    if 0 < rows < MIN_ROWS and _invariant_path(x, weight):
        padded = x.new_zeros(MIN_ROWS, x.shape[-1])
        padded[:rows] = x.reshape(rows, x.shape[-1])
        out = F.linear(padded, weight, bias)[:rows].view(*x.shape[:-1], weight.shape[0])
    else:
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
        """An ``nn.Linear`` whose inference forward runs through :func:`linear` on oneDNN: only a
        model whose kernel is oneDNN holds these (:func:`pin_kernel`)."""

        def forward(self, x: Any) -> Any:
            return linear(x, self.weight, self.bias, kernel="onednn")

    # Importable as nlgscore.backend.gemm.OneDNNLinear (module __getattr__ below), so models pickle.
    OneDNNLinear.__module__, OneDNNLinear.__qualname__ = __name__, "OneDNNLinear"
    return OneDNNLinear


def __getattr__(name: str) -> Any:
    if name == "OneDNNLinear":
        return _linear_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def wrap_linear(layer: Any) -> Any:
    """An ``nn.Linear`` subclass instance sharing ``layer``'s parameters, with the oneDNN forward."""
    return _relinked(layer, _linear_class())


def unwrap_linear(layer: Any) -> Any:
    """A plain ``nn.Linear`` sharing ``layer``'s parameters (the inverse of :func:`wrap_linear`)."""
    import torch

    return _relinked(layer, torch.nn.Linear)


def _relinked(layer: Any, cls: Any) -> Any:
    """A ``cls`` (``nn.Linear`` or a subclass) holding ``layer``'s parameters, not copies of them."""
    import torch

    new = cls.__new__(cls)
    torch.nn.Module.__init__(new)
    new.in_features, new.out_features = layer.in_features, layer.out_features
    new.weight = layer.weight
    new.bias = layer.bias
    new.train(layer.training)
    return new


def use_onednn_linears(model: Any, kernel: str = "auto") -> int:
    """Choose ``model``'s CPU kernel and swap every plain ``nn.Linear`` of it (in place) for
    :func:`wrap_linear` where that is oneDNN; returns the count swapped.

    Meant for models nlgscore loads itself for scoring; state dicts, tied weights and devices are
    unchanged. The kernel is chosen first (:func:`choose_kernel` on the model's linear shapes, in
    the model's dtype) and kept with the model (:func:`model_kernel`): nothing is swapped when
    MKL is chosen or oneDNN is unavailable (float16).

    Args:
        model: A ``torch.nn.Module`` on the CPU.
        kernel: ``"auto"`` (``NLGSCORE_ONEDNN``, else the CPU's rule), ``"onednn"`` or ``"mkl"``.

    Returns:
        How many linears now run through oneDNN.

    Raises:
        ArgumentError: ``kernel`` is not one of :data:`KERNEL_CHOICES`.
    """
    check_kernel(kernel)
    shapes = linear_shapes(model)
    dtype = str(next(model.parameters()).dtype).replace("torch.", "") if shapes else ""
    chosen = choose_kernel(shapes, dtype, kernel) if dtype in KERNEL_DTYPES else "mkl"
    return pin_kernel(model, chosen)


def pin_kernel(model: Any, kernel: str) -> int:
    """Make ``model`` run ``kernel`` (``"onednn"``, or ``"mkl"``; MKL where oneDNN is unavailable in
    its dtype) from its next forward on: its linears swapped to match, the kernel kept with it.

    Args:
        model: A model :func:`use_onednn_linears` has seen, or any CPU ``torch.nn.Module``.
        kernel: ``"onednn"`` or ``"mkl"``.

    Returns:
        How many linears of ``model`` run through oneDNN now.

    Raises:
        ArgumentError: ``kernel`` is not ``"onednn"`` or ``"mkl"``.
    """
    import torch

    if kernel not in KERNELS:
        raise ArgumentError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    params = next(iter(model.parameters()), None)
    dtype = str(params.dtype).replace("torch.", "") if params is not None else ""
    if kernel == "onednn" and not onednn_available(dtype):
        kernel = "mkl"
    wrapped = _linear_class()
    with _PIN_LOCK:
        setattr(model, KERNEL_ATTRIBUTE, kernel)
        _PINNED.add(model)
        swapped = 0
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if kernel == "onednn" and type(child) is torch.nn.Linear:
                    setattr(parent, name, wrap_linear(child))
                elif kernel == "mkl" and type(child) is wrapped:
                    setattr(parent, name, unwrap_linear(child))
                swapped += type(getattr(parent, name)) is wrapped
    return swapped


def model_kernel(model: Any) -> Optional[str]:
    """The CPU kernel ``model`` runs (``"onednn"``/``"mkl"``), None for a model no load chose one for.

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 4))
        >>> model_kernel(model) is None, pin_kernel(model, "mkl"), model_kernel(model)
        (True, 0, 'mkl')
    """
    kernel = getattr(model, KERNEL_ATTRIBUTE, None)
    return kernel if kernel in KERNELS else None


@contextmanager
def loaded_models_on(kernel: Optional[str]) -> Iterator[None]:
    """Run every model loaded so far on ``kernel`` for the block, each back on its own after.

    A resumed output run takes the kernel its first part ran on, whatever the machine's rule or
    the scorer's ``kernel=`` chose at this load (:mod:`nlgscore.corpus.outputs.resumable`).

    Args:
        kernel: ``"onednn"``/``"mkl"``; None leaves every model as it is.
    """
    if kernel is None:
        yield
        return
    previous = [(model, model_kernel(model)) for model in list(_PINNED)]
    for model, _ in previous:
        pin_kernel(model, kernel)
    try:
        yield
    finally:
        for model, own in previous:
            if own is not None:
                pin_kernel(model, own)
