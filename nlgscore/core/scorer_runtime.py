"""The run-time settings a scorer owns: :class:`ScorerRuntime`, the base of
:class:`nlgscore.core.base.Scorer`, whose ``__init__`` resolves them once.

Every scorer takes the same run-time options (:data:`nlgscore.core.runtime.RUNTIME_OPTIONS`:
device, dtype, batch_size, max_tokens, progress, accelerator, or a ready ``runtime=``); a metric's
constructor lists only its own options and forwards ``**runtime_options`` to ``super().__init__``.
:func:`scorer_runtime` is the one rule, shared with :func:`nlgscore.registry.build`.

>>> scorer_runtime(ScorerRuntime, None, {"device": "cpu", "batch_size": 4}).batch_size
4
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Optional

from nlgscore.core.options import unknown_options
from nlgscore.core.runtime import RUNTIME_OPTIONS, Runtime, resolve_runtime
from nlgscore.errors import ArgumentTypeError


def scorer_runtime(
    cls: type[ScorerRuntime], runtime: Optional[Runtime] = None, options: Optional[Dict[str, Any]] = None
) -> Runtime:
    """The resolved :class:`~nlgscore.core.runtime.Runtime` of a ``cls`` scorer given ``runtime``
    (a ready one, or None) and run-time ``options`` (None keeps a setting of ``runtime``): the one
    rule of :meth:`Scorer.__init__` and of :func:`nlgscore.registry.build`. An option that is not
    a run-time one is an error naming it and listing what ``cls`` takes.

    >>> scorer_runtime(ScorerRuntime, None, {"device": "cpu", "batch_size": 3}).batch_size
    3
    """
    given = dict(options or {})
    unknown = [name for name in given if name not in RUNTIME_OPTIONS]
    if unknown:
        raise unknown_options(cls, unknown)
    if runtime is None:
        return resolve_runtime(cls.budget_family, **given)
    if not isinstance(runtime, Runtime):
        raise ArgumentTypeError(
            f"runtime must be a nlgscore.core.runtime.Runtime or None, got {type(runtime).__name__}"
        )
    settings = runtime.options()
    settings.update({name: value for name, value in given.items() if value is not None})
    return resolve_runtime(cls.budget_family, **settings)


class ScorerRuntime:
    """Device, dtype, budget, progress and accelerator of a scorer: one resolved
    :class:`~nlgscore.core.runtime.Runtime`, with the historical attribute names."""

    # Which default budget of nlgscore.core.runtime.DEFAULT_BUDGETS: "encoder" or "seq2seq".
    budget_family: ClassVar[str] = "encoder"
    _runtime: Optional[Runtime] = None

    # -- run-time settings: one Runtime, resolved once by the constructor ----------------------
    def __init__(self, *, runtime: Optional[Runtime] = None, **runtime_options: Any) -> None:
        """Resolve and keep the scorer's run-time settings (:data:`RUNTIME_OPTIONS`: device, dtype,
        batch_size, max_tokens, progress, accelerator, shard) through the one policy,
        :func:`nlgscore.core.runtime.resolve_runtime`, before a model loads, so that a bad
        argument fails fast; or take a ready :class:`~nlgscore.core.runtime.Runtime`
        (``runtime=``, the given options overriding its settings). A metric's constructor lists
        only its own options and forwards ``**runtime_options`` here; the loader then settles
        ``dtype="auto"`` (``self.runtime = self.runtime.settled(dtype)``). Any other keyword is an
        error naming it.

        >>> from nlgscore.core.base import Scorer
        >>> class Toy(Scorer):
        ...     def __init__(self, lowercase: bool = False, **runtime_options):
        ...         super().__init__(**runtime_options)
        ...         self.lowercase = lowercase
        ...     _score_items = _finish = _signature_fields = None
        >>> Toy(device="cpu", max_tokens=512).runtime.max_tokens
        512
        >>> Toy(lowercas=True)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        nlgscore.errors.ArgumentTypeError: Toy got an unknown option lowercas=; its options: lowercase;
        run-time options: device, dtype, batch_size, max_tokens, progress, accelerator, shard, runtime
        """
        self._runtime = scorer_runtime(type(self), runtime, runtime_options)

    @property
    def runtime(self) -> Runtime:
        """Device, dtype, budget, progress and accelerator of this scorer (a call's overrides
        go to ``compute(..., batch_size=, max_tokens=, progress=)``, never here)."""
        if self._runtime is None:  # a constructor that does not call Scorer.__init__ (a model-free metric)
            self._runtime = resolve_runtime(self.budget_family, device="cpu")
        return self._runtime

    @runtime.setter
    def runtime(self, value: Runtime) -> None:
        if not isinstance(value, Runtime):
            raise ArgumentTypeError(f"runtime must be a nlgscore.core.runtime.Runtime, got {type(value).__name__}")
        self._runtime = value

    def _reset_runtime(self, **settings: Any) -> None:
        """Backward-compatible setters: ``settings`` replace the scorer's (None → the default)."""
        current = self.runtime
        fields = dict(
            device=current.device,
            dtype=current.dtype,
            batch_size=current.batch_size,
            max_tokens=current.max_tokens,
            progress=current.progress,
            accelerator=current.accelerator,
            shard=current.shard,
        )
        fields.update(settings)
        self._runtime = resolve_runtime(self.budget_family, **fields)

    @property
    def device(self) -> Any:
        """The ``torch.device`` the model runs on."""
        return self.runtime.device

    @property
    def dtype(self) -> Any:
        """The ``torch.dtype`` of the model (``dtype="auto"``: what it resolved to)."""
        return self.runtime.torch_dtype

    @property
    def batch_size(self) -> Optional[int]:
        """Most items per batch (None: no cap beyond :attr:`max_tokens`)."""
        return self.runtime.batch_size

    @batch_size.setter
    def batch_size(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(batch_size=)
        self._reset_runtime(batch_size=value)

    @property
    def max_tokens(self) -> int:
        """Padded tokens per batch; setting None restores the device default; 0 or less is an error."""
        return self.runtime.max_tokens

    @max_tokens.setter
    def max_tokens(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(max_tokens=)
        self._reset_runtime(max_tokens=value)

    @property
    def progress(self) -> bool:
        """Whether calls draw a progress bar."""
        return self.runtime.progress

    @progress.setter
    def progress(self, value: Any) -> None:  # kept for backward compatibility; prefer compute(progress=)
        self._reset_runtime(progress=value)

    @property
    def shards(self) -> bool:
        """Whether calls are split across the ranks of a launch (``shard=True`` or an
        ``accelerator``), every rank then calling with the same inputs; False: each process scores
        its own calls whole (:mod:`nlgscore.backend.distributed`)."""
        return self.runtime.shards

    @property
    def accelerator(self) -> Any:
        """The ``accelerate.Accelerator`` calls are sharded over (None: no accelerator given)."""
        return self.runtime.accelerator

    @accelerator.setter
    def accelerator(self, value: Any) -> None:
        self._reset_runtime(accelerator=value)
