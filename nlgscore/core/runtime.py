"""The one run-time policy of every scorer: device, dtype, batch budget, progress bars, accelerator.

A scorer resolves its :class:`Runtime` once, in its constructor (:func:`resolve_runtime`); a call
that wants another budget or progress setting gets ``scorer.runtime.replace(...)`` for that call
only, so a cached scorer is never changed by a call. None of these settings changes a score beyond
float rounding except ``dtype``, which the signature records.

``dtype``:

* ``"float32"`` (default): exact parity with the reference implementations;
* ``"bfloat16"``/``"float16"``: half precision, on an accelerator or on CPU (fast on CPUs with
  native bf16 arithmetic, ``avx512_bf16`` or AMX; emulated, hence slow, elsewhere);
* ``"auto"``: bfloat16 on an accelerator that supports it; on CPU, bfloat16 only where the CPU has
  native bf16 *and* a short measurement on the loaded model's own linear shapes shows it faster
  (:func:`settle_dtype`, like :mod:`nlgscore.backend.gemm`'s kernel choice); float32 otherwise. The
  signature records what it resolved to.

>>> rt = resolve_runtime("seq2seq", device="cpu")
>>> rt.device.type, rt.dtype, rt.batch_size, rt.max_tokens, rt.progress
('cpu', 'float32', None, 4096, False)
>>> call = rt.replace(max_tokens=512, progress=True)
>>> (call.max_tokens, call.progress), (rt.max_tokens, rt.progress)
((512, True), (4096, False))
>>> rt.replace(batch_size=0)
Traceback (most recent call last):
...
nlgscore.errors.ArgumentError: batch_size must be a positive integer (or None for the default), got 0
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, Dict, Optional

from nlgscore.backend import gemm  # the CPU's bf16 support and the linear timings "auto" reads
from nlgscore.backend.batching import DEFAULT_MAX_TOKENS, check_positive
from nlgscore.errors import ArgumentError, ArgumentTypeError

logger = logging.getLogger(__name__)

# The family of scorers without a model (chrF, BLEU, ROUGE): they run on the host CPU, and
# resolving their run time never imports torch (``device=None`` or ``"cpu"`` is :class:`HostCPU`).
MODEL_FREE = "model-free"


@dataclass(frozen=True)
class HostCPU:
    """The host CPU as the device of a scorer without a model, named without importing torch;
    it equals ``torch.device("cpu")``.

    >>> HostCPU().type, str(HostCPU()), HostCPU() == "cpu"
    ('cpu', 'cpu', True)
    """

    type: str = "cpu"
    index: Optional[int] = None

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, str) or hasattr(other, "type")) and str(other) == "cpu"  # "cpu", torch.device("cpu")

    def __hash__(self) -> int:
        return hash("cpu")


def _host_cpu(device: Any) -> bool:
    """Whether ``device`` names the host CPU without needing torch to say so."""
    return (
        device is None or isinstance(device, HostCPU) or (isinstance(device, str) and device.strip().lower() == "cpu")
    )


# Padded tokens per batch by model family and device. An encoder batch counts its texts' tokens;
# a seq2seq batch counts encoder + decoder tokens, hence twice the encoder budget. On an
# accelerator every family gets the same larger budget.
DEFAULT_BUDGETS = {
    "encoder": {"cpu": DEFAULT_MAX_TOKENS, "accelerator": 16384},
    "seq2seq": {"cpu": 2 * DEFAULT_MAX_TOKENS, "accelerator": 16384},
    MODEL_FREE: {"cpu": DEFAULT_MAX_TOKENS, "accelerator": DEFAULT_MAX_TOKENS},
}
# The run-time options every scorer takes (Scorer.__init__), in the order of resolve_runtime: they
# never change a score beyond float rounding, except dtype, which the signature records.
RUNTIME_OPTIONS = ("device", "dtype", "batch_size", "max_tokens", "progress", "accelerator", "shard")
# The run-time options a single call may override (compute(..., batch_size=...)): the others are
# fixed by the loaded model (device, dtype) or by the scorer (accelerator).
CALL_RUNTIME_OPTIONS = ("batch_size", "max_tokens", "progress", "shard")
DTYPES = ("float32", "bfloat16", "float16", "auto")
_DTYPE_ALIASES = {"fp32": "float32", "float": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
DEVICE_KINDS = ("cpu", "cuda", "mps", "xpu")
_DEVICE_HINT = "use cpu, cuda, cuda:N, mps or xpu"
# "auto" takes bfloat16 on CPU only when the measured bf16 linears beat float32 by this factor:
# bf16 changes scores (|dF| ~1e-3), which a tie does not pay for.
AUTO_BF16_MARGIN = 1.15


@dataclass(frozen=True)
class Runtime:
    """How a scorer runs (resolved: see :func:`resolve_runtime`); immutable, one per scorer or call.

    A scorer resolves its own from the run-time options; a caller that resolved one passes it as
    ``runtime=`` (a call's overrides make another with :meth:`replace`).

    Args:
        device: a ``torch.device``.
        dtype: a name of :data:`DTYPES` (``"auto"`` only until the model is loaded, then what it
            resolved to).
        batch_size: the most items per batch; None: no cap.
        max_tokens: the padded-token budget per batch.
        progress: draw progress bars.
        accelerator: an ``accelerate.Accelerator`` to shard calls over, or None.
        family: ``"encoder"`` or ``"seq2seq"`` (or the model-free family): picks the default budget.
        shard: split each call across the ranks of a launch, which must then all call with the
            same inputs (:mod:`nlgscore.backend.distributed`; implied by an ``accelerator``).
    """

    device: Any
    dtype: str = "float32"
    batch_size: Optional[int] = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    progress: bool = False
    accelerator: Any = None
    family: str = "encoder"
    shard: bool = False

    @property
    def shards(self) -> bool:
        """Whether calls are split across the ranks of a launch (``shard=True`` or an accelerator)."""
        return self.shard or self.accelerator is not None

    @property
    def torch_dtype(self) -> Any:
        """The ``torch.dtype`` of :attr:`dtype` (float32 while ``"auto"`` is not settled)."""
        import torch

        return torch.float32 if self.dtype == "auto" else getattr(torch, self.dtype)

    def replace(self, **overrides: Any) -> "Runtime":
        """This runtime with ``overrides`` applied. Device and dtype are fixed by the loaded
        model: giving another one is an error naming the argument.

        Args:
            **overrides: run-time options (``batch_size``, ``max_tokens``, ``progress``,
                ``accelerator``, ``shard``; ``device``/``dtype`` only as they are); None keeps a setting.

        Returns:
            The new runtime (this one when nothing changes).

        Raises:
            ArgumentError: another device or dtype, or a budget that is not positive.
            ArgumentTypeError: an option that is not a run-time option.

        Example:
            >>> rt = resolve_runtime("encoder", device="cpu", batch_size=8)
            >>> rt.replace(batch_size=None, max_tokens=256).batch_size, rt.replace(device="cpu") == rt
            (8, True)
            >>> rt.replace(dtype="bfloat16")  # doctest: +NORMALIZE_WHITESPACE
            Traceback (most recent call last):
            ...
            nlgscore.errors.ArgumentError: dtype cannot change after the model is loaded (it is float32, got 'bfloat16');
            build another scorer with dtype='bfloat16'
        """
        unknown = sorted(set(overrides) - _FIELDS - {"family"})
        if unknown or "family" in overrides:
            raise ArgumentTypeError(
                f"unknown run-time option(s): {', '.join(unknown or ['family'])}; "
                "use device, dtype, batch_size, max_tokens, progress, accelerator or shard"
            )
        changes: Dict[str, Any] = {}
        for name, value in overrides.items():
            if value is None:
                continue
            if name == "batch_size":
                changes[name] = check_positive("batch_size", value)
            elif name == "max_tokens":
                changes[name] = check_positive("max_tokens", value)
            elif name in ("progress", "shard"):
                changes[name] = check_flag(name, value)
            elif name == "accelerator":
                changes[name] = value
            elif name == "device":
                if self.family == MODEL_FREE and _host_cpu(value):
                    continue
                if resolve_device(value) != self.device:
                    raise ArgumentError(
                        f"device cannot change after the model is loaded (it is {self.device}, got {value!r}); "
                        f"build another scorer with device={value!r}"
                    )
            elif name == "dtype":
                wanted = dtype_name(value)
                if wanted not in (self.dtype, "auto"):
                    raise ArgumentError(
                        f"dtype cannot change after the model is loaded (it is {self.dtype}, got {value!r}); "
                        f"build another scorer with dtype={value!r}"
                    )
        return dataclasses.replace(self, **changes) if changes else self

    def options(self) -> Dict[str, Any]:
        """These settings as the keywords of :func:`resolve_runtime` (:data:`RUNTIME_OPTIONS`);
        ``max_tokens`` is None where it is the family's default for the device, so that another
        family resolving them gets its own default budget.

        >>> options = resolve_runtime("encoder", device="cpu", batch_size=8).options()
        >>> options["batch_size"], resolve_runtime("encoder", device="cpu").options()["max_tokens"]
        (8, None)
        """
        default = DEFAULT_BUDGETS[self.family]["cpu" if self.device.type == "cpu" else "accelerator"]
        return dict(
            device=self.device,
            dtype=self.dtype,
            batch_size=self.batch_size,
            max_tokens=None if self.max_tokens == default else self.max_tokens,
            progress=self.progress,
            accelerator=self.accelerator,
            shard=self.shard,
        )

    def settled(self, dtype: Any) -> "Runtime":
        """This runtime with the dtype the loader resolved ``"auto"`` to (or confirmed).

        Args:
            dtype: the loaded model's dtype (a ``torch.dtype`` or a name).

        Returns:
            The settled runtime.
        """
        return dataclasses.replace(self, dtype=dtype_name(dtype))


_FIELDS = frozenset(field.name for field in dataclasses.fields(Runtime))  # what replace() accepts, besides family


def resolve_runtime(
    family: str,
    device: Any = None,
    dtype: Any = None,
    batch_size: Any = None,
    max_tokens: Any = None,
    progress: Any = False,
    accelerator: Any = None,
    shard: Any = False,
) -> Runtime:
    """Check and resolve a scorer's run-time arguments (errors name the argument).

    ``device=None`` → CUDA if available, else CPU; a device this machine does not have is an
    :class:`~nlgscore.errors.ArgumentError`. ``max_tokens=None`` → the family's default for the
    device (:data:`DEFAULT_BUDGETS`). ``dtype="auto"`` is resolved here when no measurement is
    needed, else it stays ``"auto"`` until the loader calls :func:`settle_dtype` (and the scorer
    keeps ``runtime.settled(...)``).

    >>> resolve_runtime("encoder", device="cpu", dtype="bf16").dtype
    'bfloat16'
    >>> resolve_runtime("encoder", device="cuda:7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: device 'cuda:7': ...
    """
    if family not in DEFAULT_BUDGETS:
        raise ArgumentError(f"family must be one of {', '.join(DEFAULT_BUDGETS)}, got {family!r}")
    model_free = family == MODEL_FREE and _host_cpu(device)
    torch_device = HostCPU() if model_free else resolve_device(device)
    name = dtype_name(dtype)
    if name == "auto":
        name = _auto_without_measurement(torch_device)
    batch_size = check_positive("batch_size", batch_size)
    max_tokens = check_positive("max_tokens", max_tokens)
    kind = "cpu" if torch_device.type == "cpu" else "accelerator"
    if kind == "cpu" and not model_free:  # torch's threads from the CPUs this process has, not the machine's cores
        from nlgscore.backend.threads import limit_threads

        limit_threads()
    budget = max_tokens if max_tokens is not None else DEFAULT_BUDGETS[family][kind]
    return Runtime(
        torch_device,
        name,
        batch_size,
        budget,
        check_flag("progress", progress),
        accelerator,
        family,
        check_flag("shard", shard),
    )


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool (``None`` → False); anything but a bool is an error naming ``name``."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, got {type(value).__name__}: {value!r}")
    return value


def resolve_device(device: Any = None) -> Any:
    """``None`` → CUDA if available (``cuda:<LOCAL_RANK>`` in a launched multi-process run), else CPU;
    an int is a CUDA ordinal; a device this machine does not have (``cuda:7`` on a 1-GPU machine,
    ``cuda`` on CPU-only torch, ``mps`` off a Mac) is an :class:`~nlgscore.errors.ArgumentError`
    naming ``device``.

    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: device 'tpu' is not a torch device; use cpu, cuda, cuda:N, mps or xpu
    """
    import torch

    if device is None:
        if not torch.cuda.is_available():
            return torch.device("cpu")
        from nlgscore.backend.distributed import launched_local_rank

        # under torchrun / accelerate launch each process takes its own GPU, before any process group exists
        local = launched_local_rank()
        return torch.device("cuda") if local is None else torch.device("cuda", local % torch.cuda.device_count())
    if isinstance(device, bool) or not isinstance(device, (str, int, torch.device)):
        raise ArgumentTypeError(
            f"device must be a string such as 'cpu' or 'cuda:0', an int or a torch.device, got {type(device).__name__}: {device!r}"
        )
    try:
        resolved = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    except (RuntimeError, TypeError, ValueError) as err:
        raise ArgumentError(f"device {device!r} is not a torch device; {_DEVICE_HINT}") from err
    if resolved.type not in DEVICE_KINDS:
        raise ArgumentError(f"device {device!r} is not supported; {_DEVICE_HINT}")
    problem = _unavailable(resolved)
    if problem:
        raise ArgumentError(f"device {str(device)!r}: {problem}")
    return resolved


def _unavailable(device: Any) -> str:
    """Why ``device`` cannot be used here ("" when it can)."""
    import torch

    if device.type == "cpu":
        return ""
    backend = {"cuda": torch.cuda, "xpu": getattr(torch, "xpu", None), "mps": getattr(torch.backends, "mps", None)}[
        device.type
    ]
    if backend is None or not backend.is_available():
        return f"{device.type.upper()} is not available on this machine (use device='cpu')"
    count = backend.device_count() if hasattr(backend, "device_count") else 1
    if device.index is not None and device.index >= count:
        return f"this machine has {count} {device.type.upper()} device(s) (indices 0 to {count - 1})"
    return ""


def dtype_name(dtype: Any) -> str:
    """The canonical name of a dtype argument: one of :data:`DTYPES` (None → ``"float32"``).

    >>> dtype_name(None), dtype_name("bf16"), dtype_name("torch.float16")
    ('float32', 'bfloat16', 'float16')
    """
    if dtype is None:
        return "float32"
    if not isinstance(dtype, str) and type(dtype).__name__ != "dtype":
        raise ArgumentTypeError(
            f"dtype must be a string such as 'bfloat16' or a torch.dtype, got {type(dtype).__name__}: {dtype!r}"
        )
    name = str(dtype).replace("torch.", "").strip().lower()
    name = _DTYPE_ALIASES.get(name, name)
    if name not in DTYPES:
        raise ArgumentError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return name


def _auto_without_measurement(device: Any) -> str:
    """``"auto"`` where no measurement is needed: bf16 on a bf16-capable accelerator, float32 on
    a CPU without native bf16; ``"auto"`` (to measure at load) on a CPU with it."""
    import torch

    if device.type == "cuda":
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device.type != "cpu":
        return "bfloat16"
    return "auto" if gemm.cpu_native_bf16() else "float32"


def settle_dtype(model: Any, dtype: str) -> Any:
    """Cast a loaded ``model`` to ``dtype`` and return the ``torch.dtype`` it now has.

    ``"auto"`` (left by :func:`resolve_runtime` on a CPU with native bf16) is resolved by timing
    the float32 and bfloat16 linears of ``model``'s own shapes
    (:func:`nlgscore.backend.gemm.measure_dtypes`); the choice and its timings are logged and kept
    in :data:`AUTO_CHOICE`.

    Args:
        model: a loaded ``torch.nn.Module``, cast in place.
        dtype: a name of :data:`DTYPES`, or ``"auto"``.

    Returns:
        The model's ``torch.dtype`` after the cast.

    Example:
        >>> import torch
        >>> settle_dtype(torch.nn.Linear(4, 2), "bfloat16")
        torch.bfloat16
    """
    import torch

    name = dtype_name(dtype)
    if name == "auto":
        timings = gemm.measure_dtypes(gemm.linear_shapes(model))
        name = "bfloat16" if timings["bfloat16"] * AUTO_BF16_MARGIN < timings["float32"] else "float32"
        AUTO_CHOICE.clear()
        AUTO_CHOICE.update(
            dtype=name, float32_ms=round(timings["float32"], 3), bfloat16_ms=round(timings["bfloat16"], 3)
        )
        logger.info(
            "dtype='auto' on CPU: %s (float32 %.2f ms, bfloat16 %.2f ms on the model's linear shapes)",
            name,
            timings["float32"],
            timings["bfloat16"],
        )
    target = getattr(torch, name)
    if any(p.is_floating_point() and p.dtype != target for p in model.parameters()):
        model.to(target)
    return target


# What the last ``dtype="auto"`` CPU load chose and measured (empty before any).
AUTO_CHOICE: Dict[str, Any] = {}
