"""Token buckets for CUDA graphs: which bucket a batch takes, how it is padded to it, and the
bounded cache of captured graphs.

A CUDA graph replays fixed shapes, so a token forward is captured once per bucket of total tokens
(:data:`BUCKETS`) and a batch is padded up to its bucket with *filler sequences* that attend only
to themselves; the sequences are described by a ``cu_seqlens`` tensor with a fixed number of
slots per bucket (:func:`slots`), the ones past the last sequence empty. None of this depends on
the model, so every metric room that captures a token forward (BERTScore's encoder, the seq2seq
engine's encoder-decoder) lays its batches out with these pieces; only the capture itself is the
room's. Each captured graph holds its own memory pool, so :class:`GraphCache` bounds how many are
kept. ``NLGSCORE_CUDA_GRAPHS=0`` turns graphs off (:func:`enabled`).

>>> bucket_for(700), bucket_for(1025), bucket_for(70000)
(1024, 2048, None)
>>> plan = graph_plan([5, 3], bucket=16, max_len=6, slot_count=6)
>>> plan.lengths, plan.cu
([5, 3, 6, 2, 0, 0], [0, 5, 8, 14, 16, 16, 16])
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, List, Optional, Sequence

from nlgscore import envs

__all__ = [
    "BUCKETS",
    "DEFAULT_MAX_GRAPHS",
    "ENV_SWITCH",
    "MIN_SLOTS",
    "TOKENS_PER_SLOT",
    "GraphCache",
    "GraphPlan",
    "bucket_for",
    "enabled",
    "graph_plan",
    "slots",
]

ENV_SWITCH = envs.CUDA_GRAPHS.name
# Token counts a graph is captured for: 1k (a run of single-sample calls) to 64k (a large budget).
BUCKETS = tuple(1 << k for k in range(10, 17))
# Sequences a bucket's graph takes: an eighth of its tokens (WMT sentences average ~25 tokens), at
# least 64 (a micro-batcher's run of single texts). Empty slots cost the attention kernel empty
# blocks of work, so the count is kept near what batches hold rather than the worst case.
MIN_SLOTS = 64
TOKENS_PER_SLOT = 8
DEFAULT_MAX_GRAPHS = 4  # the graphs kept at once (each with its own memory pool)


def enabled() -> bool:
    """Whether graphs may be used (``NLGSCORE_CUDA_GRAPHS=0`` turns them off)."""
    return bool(envs.CUDA_GRAPHS.get())


def bucket_for(tokens: int) -> Optional[int]:
    """The smallest bucket holding ``tokens`` tokens; None above the largest."""
    return next((bucket for bucket in BUCKETS if tokens <= bucket), None)


def slots(bucket: int, max_len: int) -> int:
    """Sequences a bucket's graph takes: real ones, then the filler of up to ``bucket`` tokens.

    >>> slots(1024, 512), slots(65536, 512)
    (130, 8320)
    """
    return max(MIN_SLOTS, bucket // TOKENS_PER_SLOT) + -(-bucket // max_len)


@dataclass
class GraphPlan:
    """A batch laid out for a bucket's graph: every slot's length (real sequences, filler,
    empty slots) and the ``cu_seqlens`` of them."""

    bucket: int
    tokens: int  # real tokens
    lengths: List[int]
    cu: List[int]


def graph_plan(lengths: Sequence[int], bucket: int, max_len: int, slot_count: int) -> Optional[GraphPlan]:
    """The layout of sequences of ``lengths`` in a graph of ``bucket`` tokens and ``slot_count``
    sequences, the filler cut in sequences of at most ``max_len``; None if it does not fit."""
    tokens = sum(lengths)
    if tokens > bucket or any(n > max_len for n in lengths):
        return None
    filler = bucket - tokens
    laid = list(lengths) + [max_len] * (filler // max_len) + ([filler % max_len] if filler % max_len else [])
    if len(laid) > slot_count:
        return None
    laid += [0] * (slot_count - len(laid))
    cu = [0]
    for n in laid:
        cu.append(cu[-1] + n)
    return GraphPlan(bucket, tokens, laid, cu)


class GraphCache:
    """At most ``max_graphs`` captured graphs by key (a bucket, or a pair of them), the least
    recently used dropped first.

    ``capture(key)`` makes one (on a miss). Dropping a graph drops the last reference to it
    and to its memory pool, which PyTorch's caching allocator then reuses.

    >>> made = []
    >>> cache = GraphCache(lambda bucket: made.append(bucket) or f"graph {bucket}", max_graphs=2)
    >>> [cache.get(b) for b in (1024, 2048, 1024, 4096)][-1], sorted(cache.buckets()), made
    ('graph 4096', [1024, 4096], [1024, 2048, 4096])
    """

    def __init__(self, capture: Callable[[Any], Any], max_graphs: int = DEFAULT_MAX_GRAPHS) -> None:
        if max_graphs < 1:
            raise ValueError(f"max_graphs must be at least 1, got {max_graphs}")
        self.capture, self.max_graphs = capture, max_graphs
        self._graphs: "OrderedDict[Hashable, Any]" = OrderedDict()
        self.captures = 0

    def get(self, bucket: Hashable) -> Any:
        graph = self._graphs.get(bucket)
        if graph is not None:
            self._graphs.move_to_end(bucket)
            return graph
        while len(self._graphs) >= self.max_graphs:
            self._graphs.popitem(last=False)
        graph = self._graphs[bucket] = self.capture(bucket)
        self.captures += 1
        return graph

    def buckets(self) -> List[Any]:
        return list(self._graphs)
