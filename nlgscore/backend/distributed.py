"""Several processes of one launch (``torchrun``, ``accelerate launch``): which rank scores what.

A call in a launched process scores its own inputs and returns its own scores: no collective
runs, so each rank may score its own data, rank 0 may score alone, and ``evaluate``'s
``num_process``/``process_id`` mode (process 0 computes what every process added) works as on
one process. A call is split across the ranks only where its caller guarantees that every rank
calls with the same inputs (``shard=True``, an explicit ``accelerator=``, the Trainer
integration, the CLI under a launcher). Then:

1. every rank sends a digest of its call's inputs to the others; different digests are a
   :class:`ShardError` on every rank, naming the ranks, never mixed scores;
2. every rank scores a contiguous share of the distinct items;
3. the shares are gathered in input order, so every rank returns every score. A rank whose share
   failed sends its error instead of scores: it raises its own error, the others a
   :class:`ShardError` naming it, so none waits for scores that never come.

The process group, when no one has started it, is started on first use from the launcher's
environment (gloo on CPU, NCCL on GPUs, each process on GPU ``LOCAL_RANK``) and ended at exit,
so every rank exits cleanly. A group the script (or accelerate) started is left to its owner.

>>> shard(3, lambda idx: [i * 10 for i in idx])  # one process: the function sees every index
[0, 10, 20]
"""

from __future__ import annotations

import atexit
import hashlib
import os
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

from nlgscore.errors import NlgscoreError

LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")  # what torchrun and accelerate launch set


class ShardError(NlgscoreError):
    """A call split across ranks that the ranks cannot finish together: they called with
    different inputs, or another rank failed on its share (its error is in the message)."""


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


@dataclass(frozen=True)
class Ranks:
    """The processes a sharded call runs on: this one's ``index`` among ``count``."""

    index: int
    count: int

    @property
    def is_main_process(self) -> bool:
        """Rank 0: the one that writes a corpus run's output."""
        return self.index == 0

    def share(self, n: int) -> List[int]:
        """This rank's contiguous share of ``range(n)``; the first ``n % count`` ranks take one more.

        >>> [Ranks(r, 3).share(7) for r in range(3)]
        [[0, 1, 2], [3, 4], [5, 6]]
        """
        base, extra = divmod(n, self.count)
        start = self.index * base + min(self.index, extra)
        return list(range(start, start + base + (self.index < extra)))


_STARTED = False  # this module started the process group (and ends it at exit)


def _end_group() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def start_group() -> bool:
    """The default process group, started from a launcher's environment if no one has started
    it (ended at exit); True when one is up. Outside a launch nothing starts (and a model-free
    process never imports torch here)."""
    global _STARTED
    import sys

    if launched_world_size() <= 1 and "torch.distributed" not in sys.modules:
        return False
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        return False
    if dist.is_initialized():
        return True
    if launched_world_size() <= 1:
        return False
    if torch.cuda.is_available():
        torch.cuda.set_device((launched_local_rank() or 0) % torch.cuda.device_count())
        dist.init_process_group(backend="nccl")
    else:
        dist.init_process_group(backend="gloo")
    if not _STARTED:
        _STARTED = True
        atexit.register(_end_group)
    return True


def shard_ranks(accelerator: Any = None) -> Optional[Ranks]:
    """The ranks a sharded call runs on: ``accelerator``'s (an ``accelerate.Accelerator`` or its
    state), else the launch's (its process group started if needed); None on one process.

    >>> shard_ranks() if launched_world_size() == 1 else None
    """
    if accelerator is not None:
        state = getattr(accelerator, "state", accelerator)
        count = int(state.num_processes)
        return Ranks(int(state.process_index), count) if count > 1 else None
    if not start_group():
        return None
    import torch.distributed as dist

    count = dist.get_world_size()
    return Ranks(dist.get_rank(), count) if count > 1 else None


def _all_gather(value: Any) -> List[Any]:
    import torch.distributed as dist

    out: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def broadcast_from_main(value: Any, ranks: Optional[Ranks]) -> Any:
    """``value`` as rank 0 has it, on every rank of ``ranks`` (itself when None).

    >>> broadcast_from_main(3, None)
    3
    """
    if ranks is None:
        return value
    import torch.distributed as dist

    box = [value if ranks.is_main_process else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def inputs_digest(parts: Sequence[Any]) -> str:
    """A SHA-256 of ``parts`` by their ``repr`` (strings, numbers, tuples of them): what two ranks
    compare before splitting one call.

    >>> inputs_digest(["a", ("b", None)]) == inputs_digest(["a", ("b", None)]), inputs_digest(["a"]) == inputs_digest(["b"])
    (True, False)
    """
    digest = hashlib.sha256()
    for part in parts:
        text = repr(part).encode("utf-8", "surrogatepass")
        digest.update(len(text).to_bytes(8, "little"))
        digest.update(text)
    return digest.hexdigest()


def _check_same_inputs(ranks: Ranks, digest: str, n: int) -> None:
    seen: List[Tuple[str, int]] = _all_gather((digest, n))
    if len({d for d, _ in seen}) == 1:
        return
    groups: dict = {}
    for rank, (d, count) in enumerate(seen):
        groups.setdefault(d, []).append((rank, count))
    described = "; ".join(
        f"rank{'s' if len(g) > 1 else ''} {', '.join(str(r) for r, _ in g)} ({g[0][1]} distinct items)"
        for g in groups.values()
    )
    raise ShardError(
        f"a sharded call needs the same inputs on every rank, but the ranks differ: {described}. "
        "To score each rank's own inputs, call without shard=True and accelerator= (the default); "
        "to split one set of inputs, pass every rank the same inputs"
    )


def shard(
    n: int, fn: Callable[[List[int]], Sequence[Any]], accelerator: Any = None, digest: str = "", enabled: bool = True
) -> List[Any]:
    """``fn(indices)`` on this rank's share of ``range(n)``; all ``n`` results in order, on every rank.

    ``fn`` returns one result per index it is given. ``enabled=False``, or a single process: ``fn``
    gets every index, nothing is exchanged. Otherwise the ranks first compare ``digest`` (of the
    inputs): different digests are a :class:`ShardError` on every rank. A rank whose ``fn`` raises
    raises it, and every other rank a :class:`ShardError` naming it.
    """
    ranks = shard_ranks(accelerator) if enabled else None
    if ranks is None:
        return list(fn(list(range(n))))
    _check_same_inputs(ranks, digest, n)
    mine = ranks.share(n)
    failure: Optional[BaseException] = None
    values: List[Any] = []
    try:
        values = list(fn(mine)) if mine else []
        if len(values) != len(mine):
            raise RuntimeError(f"rank {ranks.index} scored {len(values)} items for a share of {len(mine)}")
    except Exception as err:  # sent to the other ranks, which would otherwise wait for this share
        failure, values = err, []
    problem = f"{type(failure).__name__}: {failure}" if failure is not None else None
    gathered = _all_gather((mine, values, problem))
    failed = [(rank, message) for rank, (_, _, message) in enumerate(gathered) if message is not None]
    if failure is not None:
        raise failure
    if failed:
        rank, message = failed[0]
        raise ShardError(f"rank {rank} failed on its share of a sharded call: {message}")
    out: List[Any] = [None] * n
    for indices, results, _ in gathered:
        for i, value in zip(indices, results, strict=True):
            out[i] = value
    return out
