"""Splitting work across processes (accelerate) and gathering it back in input order.

Every process gets a contiguous share of the items, scores it, and all shares are gathered with
``accelerate.utils.gather_object``; every process returns the full list in input order, so
callers (a Trainer's ``compute_metrics`` on each rank) see identical results everywhere.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence


def active_state(accelerator: Any = None) -> Any:
    """The accelerate state to shard with, or None for a single process.

    An explicit ``accelerator`` wins; otherwise a launched multi-process run (``accelerate
    launch`` or ``torchrun``, i.e. an initialised ``torch.distributed``) is detected.
    """
    if accelerator is not None:
        state = getattr(accelerator, "state", accelerator)
        return state if state.num_processes > 1 else None
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return None
    from accelerate import PartialState

    state = PartialState()
    return state if state.num_processes > 1 else None


def shard(n: int, fn: Callable[[List[int]], Sequence[Any]], accelerator: Any = None) -> List[Any]:
    """Run ``fn(indices)`` on this process's share of ``range(n)``; return all ``n`` results in order.

    ``fn`` must return one result per index it is given (possibly for an empty share).

    >>> shard(3, lambda idx: [i * 10 for i in idx])
    [0, 10, 20]
    """
    state = active_state(accelerator)
    if state is None:
        return list(fn(list(range(n))))
    from accelerate.utils import gather_object

    with state.split_between_processes(list(range(n))) as mine:
        mine = list(mine)
        values = list(fn(mine)) if mine else []
    if len(values) != len(mine):
        raise RuntimeError(f"process {state.process_index} scored {len(values)} items for a share of {len(mine)}")
    gathered = gather_object([(i, v) for i, v in zip(mine, values)])
    out: List[Optional[Any]] = [None] * n
    seen = 0
    for i, value in gathered:
        if out[i] is None:
            seen += 1
        out[i] = value
    if seen != n:
        raise RuntimeError(f"gathered {seen} of {n} results across {state.num_processes} processes")
    return out  # type: ignore[return-value]
