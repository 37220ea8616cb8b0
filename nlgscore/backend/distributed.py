"""Splitting work across processes (accelerate) and gathering it back in input order.

Every process gets a contiguous share of the items, scores it, and all shares are gathered with
``accelerate.utils.gather_object``; every process returns the full list in input order, so
callers (a Trainer's ``compute_metrics`` on each rank) see identical results everywhere.

A script started by ``torchrun`` or ``accelerate launch --multi_gpu`` (one node or several) needs
no set-up: the launcher's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``) is enough, and
the first scoring call initialises the process group through accelerate's ``PartialState`` —
gloo on CPU, NCCL on GPUs — if the script has not done so itself. (accelerate's own
``PartialState()`` leaves a CPU-only launch un-initialised, so each process would score
everything.)
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, List, Optional, Sequence

LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")  # what torchrun and accelerate launch set


def launched_world_size() -> int:
    """The number of processes a launcher started this one among (1 when not launched).

    >>> launched_world_size() if "WORLD_SIZE" not in os.environ else 1
    1
    """
    if not all(os.environ.get(name) for name in LAUNCH_VARIABLES):
        return 1
    try:
        return max(int(os.environ["WORLD_SIZE"]), 1)
    except ValueError:
        return 1


def launched_local_rank() -> Optional[int]:
    """This process's rank on its node in a multi-process launch (None when not launched): the
    default CUDA device of a launched process is ``cuda:<local rank>`` (mod the visible GPUs).

    >>> launched_local_rank() if launched_world_size() == 1 else None
    """
    if launched_world_size() <= 1:
        return None
    try:
        return int(os.environ["LOCAL_RANK"])
    except ValueError:
        return None


def init_from_launcher() -> bool:
    """Initialise ``torch.distributed`` from a launcher's environment (no-op otherwise); True when
    a process group is up. On CPU-only torch the backend is gloo, with CUDA accelerate's default
    (NCCL, each process on GPU ``LOCAL_RANK``). Outside a launch, a process group can only be up
    if something imported ``torch.distributed`` already: a model-free run never imports torch here."""
    if launched_world_size() <= 1 and "torch.distributed" not in sys.modules:
        return False
    import torch.distributed as dist

    if not dist.is_available():
        return False
    if dist.is_initialized():
        return True
    if launched_world_size() <= 1:
        return False
    import torch
    from accelerate import PartialState

    PartialState(cpu=not torch.cuda.is_available())
    return dist.is_initialized()


def active_state(accelerator: Any = None) -> Any:
    """The accelerate state to shard with, or None for a single process.

    An explicit ``accelerator`` wins; otherwise a launched multi-process run (``accelerate
    launch`` or ``torchrun``) is detected, and its process group initialised if needed.
    """
    if accelerator is not None:
        state = getattr(accelerator, "state", accelerator)
        return state if state.num_processes > 1 else None
    if not init_from_launcher():
        return None
    from accelerate import PartialState

    state = PartialState()
    return state if state.num_processes > 1 else None


def broadcast_from_main(value: Any, accelerator: Any = None) -> Any:
    """``value`` as the main process has it, on every process (itself on a single process).

    >>> broadcast_from_main(3)
    3
    """
    state = active_state(accelerator)
    if state is None:
        return value
    from accelerate.utils import broadcast_object_list

    box = [value if state.is_main_process else None]
    broadcast_object_list(box, from_process=0)
    return box[0]


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
