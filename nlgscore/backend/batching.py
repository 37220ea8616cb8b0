"""Batch planning shared by every metric.

Texts are de-duplicated, stably sorted by token length (longest first, so an out-of-memory
error shows up on the first batch) and packed into batches whose padded size
``len(batch) * max_len(batch)`` stays under a token budget. Padding, not the number of
sentences, is what costs time, which is why the budget is in tokens (about 2,000
tokens per batch is much faster than 8,000 on 2 CPU cores).

>>> plan_batches([3, 10, 2, 10, 5], max_tokens=20)
[[1, 3], [4, 0, 2]]
>>> unique(["a", "b", "a"])
(['a', 'b'], [0, 1, 0])

**Batch invariance.** Attention sums over a batch's padded key length, and the kernels sum a
20-key row in another order when its keys are padded to 21-31 than at 32 or beyond (zeros past a
full vector never move the real values; a partial vector does), and at long lengths the order
changes with the padded length itself. So a sequence is always run padded to
:func:`padded_length` of its own length, beside sequences padded to the same length only
(:func:`length_groups`): its bits then depend on it alone, whatever else the call holds.

>>> padded_length(20), padded_length(32), length_groups([20, 33, 31, 5])
(32, 48, [[0, 2], [1], [3]])
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Hashable, List, Literal, Optional, Sequence, Tuple, TypeVar, overload

from nlgscore.errors import ArgumentError, ArgumentTypeError

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=Hashable)

DEFAULT_MAX_TOKENS = 2048
MIN_MAX_TOKENS = 16
# Padded lengths are multiples of this (16 fp32 / 32 bf16 values fill an AVX-512 vector).
LENGTH_MULTIPLE = 16


def padded_length(n: int) -> int:
    """The length a sequence of ``n`` tokens is padded to: the next multiple of LENGTH_MULTIPLE
    above ``n``, so at least one padding position always exists and every batch takes the masked
    attention path (a batch without padding may skip the mask, another kernel path)."""
    return (n // LENGTH_MULTIPLE + 1) * LENGTH_MULTIPLE


def round_up_length(n: int) -> int:
    """``n`` rounded up to a multiple of LENGTH_MULTIPLE (at least one): the padded token axis of a
    per-text sum or a similarity product, so that a text's values are summed in one order."""
    return max(1, -(-n // LENGTH_MULTIPLE)) * LENGTH_MULTIPLE


def token_sum(values: Any, dim: int = -1, keepdim: bool = False) -> Any:
    """Sum of ``values`` along a zero-padded token axis, in one order whatever the padded length.

    ``Tensor.sum`` combines its vector accumulators in an order that depends on the axis length:
    43 values padded to 48 and to 64 summed to other bits (9 of 200 random rows; a pair's
    BERTScore moved by 6e-8 beside a longer pair). ``cumsum`` adds left to right (on CPU in
    float64 for float32), so trailing zeros never move its last element.

    >>> import torch
    >>> x = torch.rand(43, generator=torch.Generator().manual_seed(3)) / 43
    >>> a, b = torch.zeros(48), torch.zeros(64)
    >>> a[:43], b[:43] = x, x
    >>> bool(token_sum(a) == token_sum(b))
    True
    """
    total = values.cumsum(dim=dim).narrow(dim, values.shape[dim] - 1, 1)
    return total if keepdim else total.squeeze(dim)


def length_groups(lengths: Sequence[int]) -> List[List[int]]:
    """Indices of ``lengths`` grouped by :func:`padded_length`, groups in first-seen order."""
    groups: Dict[int, List[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(padded_length(n), []).append(i)
    return list(groups.values())


@overload
def check_positive(name: str, value: Any, allow_none: Literal[False]) -> int: ...
@overload
def check_positive(name: str, value: Any, allow_none: bool = True) -> Optional[int]: ...
def check_positive(name: str, value: Any, allow_none: bool = True) -> Optional[int]:
    """``value`` as a positive int (or None), else a TypeError/ValueError naming ``name``.

    >>> check_positive("batch_size", 8)
    8
    >>> check_positive("max_tokens", 0)
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: max_tokens must be a positive integer (or None for the default), got 0
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(
            f"{name} must be a positive integer{' or None' if allow_none else ''}, got {type(value).__name__}: {value!r}"
        )
    if value < 1:
        raise ArgumentError(
            f"{name} must be a positive integer{' (or None for the default)' if allow_none else ''}, got {value!r}"
        )
    return value


def unique(items: Sequence[T]) -> Tuple[List[T], List[int]]:
    """Distinct items in first-occurrence order, and for each input the index of its distinct item."""
    index: Dict[T, int] = {}
    inverse = [index.setdefault(item, len(index)) for item in items]
    return list(index), inverse


def plan_batches(
    lengths: Sequence[int],
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_batch_size: Optional[int] = None,
    group: Optional[Sequence[Hashable]] = None,
    sort_keys: Optional[Sequence[Any]] = None,
) -> List[List[int]]:
    """Indices of ``lengths`` grouped into batches, longest first (stable for equal lengths).

    A batch never exceeds ``max_tokens`` padded tokens (a single item longer than the budget gets
    a batch of its own) nor ``max_batch_size`` items. ``group``, if given, is a secondary sort key
    placed after the length so that items sharing a key (e.g. the same source text) end up next to
    each other and can share work inside a batch. ``sort_keys``, if given, replaces the order
    (items sorted by their key, e.g. one recurring source after the other).
    """
    if max_tokens < 1:
        raise ArgumentError(f"max_tokens must be positive, got {max_tokens}")
    if max_batch_size is not None and max_batch_size < 1:
        raise ArgumentError(f"batch_size must be positive, got {max_batch_size}")
    if sort_keys is not None:
        order = sorted(range(len(lengths)), key=lambda i: sort_keys[i])
    elif group is None:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    else:
        first_seen: Dict[Hashable, int] = {}
        for i, key in enumerate(group):
            first_seen.setdefault(key, i)
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], first_seen[group[i]]))
    batches: List[List[int]] = []
    current: List[int] = []
    current_max = 0
    for i in order:
        longest = max(current_max, lengths[i], 1)
        full = max_batch_size is not None and len(current) >= max_batch_size
        if current and (full or longest * (len(current) + 1) > max_tokens):
            batches.append(current)
            current, longest = [], max(lengths[i], 1)
        current.append(i)
        current_max = longest
    if current:
        batches.append(current)
    return batches


def plan_packed(
    lengths: Sequence[int],
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_batch_size: Optional[int] = None,
    multiple: int = 1,
) -> List[List[int]]:
    """Batches for a forward whose cost is its *real* tokens (a packed encoder: padding only in
    attention), longest first: the fewest batches of at most ``max_tokens`` real tokens, nearly
    equal, each filled up to the same multiple of ``multiple`` rows (:data:`nlgscore.backend.product_rows.ROW_BUCKET`:
    a product of a multiple of it runs as one, without a tail product), so little is padded and no
    small trailing batch runs at a poor matmul efficiency. A text over the budget gets a batch alone.

    >>> plan_packed([10, 30, 20, 25, 15], max_tokens=60, multiple=16)  # 55 and 45 real tokens
    [[1, 3], [2, 4, 0]]
    """
    if max_tokens < 1:
        raise ArgumentError(f"max_tokens must be positive, got {max_tokens}")
    if not lengths:
        return []
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    sizes = [max(n, 1) for n in lengths]
    count = -(-sum(sizes) // max_tokens)
    if max_batch_size is not None:
        count = max(count, -(-len(lengths) // max_batch_size))
    target = -(-sum(sizes) // count)
    target = min(max_tokens, -(-target // multiple) * multiple) if multiple > 1 else target
    batches: List[List[int]] = []
    current: List[int] = []
    used = 0
    for i in order:
        full = max_batch_size is not None and len(current) >= max_batch_size
        if current and (full or used + sizes[i] > target):
            batches.append(current)
            current, used = [], 0
        current.append(i)
        used += sizes[i]
    batches.append(current)
    return batches


def is_out_of_memory(error: BaseException) -> bool:
    """True for a CUDA (or other accelerator) out-of-memory error."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def run_batches(
    lengths: Sequence[int],
    process: Callable[[List[int]], None],
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_batch_size: Optional[int] = None,
    group: Optional[Sequence[Hashable]] = None,
    progress: Any = False,
    desc: Optional[str] = None,
    sort_keys: Optional[Sequence[Any]] = None,
) -> int:
    """Call ``process(indices)`` on every batch `plan_batches` makes; return the final budget.

    An out-of-memory error halves the budget and plans the items not yet done again (as
    `run_with_backoff`), so ``process`` stores its own results by index.

    Args:
        lengths: each item's length in tokens; a batch's padded size is its longest times its items.
        process: scores one batch, given the indices of its items.
        max_tokens: the padded tokens per batch at the start.
        max_batch_size: the most items per batch (None: only the token budget bounds it).
        group: a key per item (its source text) placed after the length, so items sharing it are
            batched side by side and can share work.
        progress: True draws a bar of the items; a callable is told ``(items done, items)`` after
            each batch.
        desc: the bar's description.
        sort_keys: a key per item that replaces the longest-first order.

    Returns:
        The token budget finally used (smaller than ``max_tokens`` after an out-of-memory error).

    Raises:
        ArgumentError: ``max_tokens`` or ``max_batch_size`` is not positive.

    Example:
        >>> seen = []
        >>> run_batches([3, 9, 5], seen.append, max_tokens=10)
        10
        >>> seen  # longest first; 9 and 5 padded to 9 would take 18 tokens
        [[1], [2, 0]]
    """

    def plan(remaining: List[int], budget: int) -> List[List[int]]:
        sub_group = None if group is None else [group[i] for i in remaining]
        sub_keys = None if sort_keys is None else [sort_keys[i] for i in remaining]
        batches = plan_batches([lengths[i] for i in remaining], budget, max_batch_size, sub_group, sub_keys)
        return [[remaining[j] for j in batch] for batch in batches]

    return run_with_backoff(len(lengths), plan, process, max_tokens, progress=progress, desc=desc)


def run_with_backoff(
    n: int,
    plan: Callable[[List[int], int], List[List[int]]],
    process: Callable[[List[int]], None],
    budget: int,
    progress: Any = False,
    desc: Optional[str] = None,
    unit: str = "item",
) -> int:
    """Run ``process`` on the batches ``plan(remaining, budget)`` makes of ``range(n)``; return the
    budget finally used. Every batched loop of every metric goes through here.

    ``progress``: True draws a bar of the ``n`` units; a callable (a call's
    :class:`nlgscore.backend.progress.ItemProgress`) is told ``(units done, n)`` after each batch.

    On an out-of-memory error the budget is halved, the error logged, and the items not yet done
    are planned again, so a long run adapts instead of aborting; results do not depend on the
    plan. ``process`` stores its own results (by index), so nothing is lost or duplicated when a
    batch is retried.

    >>> seen = []
    >>> run_with_backoff(5, lambda idx, b: [idx[k:k + b] for k in range(0, len(idx), b)], seen.append, 2)
    2
    >>> seen
    [[0, 1], [2, 3], [4]]
    """
    from nlgscore.backend.progress import progress_bar

    remaining = list(range(n))
    report = progress if callable(progress) else None
    drawn = report is None and bool(progress)
    with progress_bar(total=n, desc=desc, unit=unit) if drawn else _NoBar() as bar:
        while remaining:
            done = set()
            retry = False
            for indices in plan(remaining, budget):
                try:
                    process(indices)
                except Exception as err:
                    if not is_out_of_memory(err):
                        raise
                    new_budget = budget // 2
                    if len(indices) == 1 or new_budget < MIN_MAX_TOKENS:
                        raise
                    _free_accelerator_memory()
                    logger.warning("out of memory with a budget of %d per batch; retrying with %d", budget, new_budget)
                    budget = new_budget
                    retry = True
                    break
                done.update(indices)
                bar.update(len(indices))
                if report is not None:
                    report(n - len(remaining) + len(done), n)
            remaining = [i for i in remaining if i not in done] if retry else []
    return budget


class _NoBar:
    """The bar of a loop that draws none: a disabled tqdm still takes its class lock and joins its
    registry of bars, about as long as the rest of a one-item call's batching."""

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def update(self, count: int) -> None:
        """Nothing to draw."""


def _free_accelerator_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
