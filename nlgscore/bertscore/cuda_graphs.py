"""CUDA graphs of the token forward, one per bucket of total tokens.

A forward of a small batch on a GPU is bound by its kernel launches (hundreds per call: every
product tile, norm and attention call of every layer), not by the card. vLLM captures its forward
once per token count and replays it; sglang's encoder went from ~460 launches and the GPU ~8 %
busy to one replay. The token forward (:mod:`nlgscore.bertscore.token_forward`) has the shapes
that allows: everything is ``(tokens, hidden)``, and the sequences are described by a tensor
(``cu_seqlens``), not by shapes. So a batch is padded to the next bucket of :data:`BUCKETS`
tokens and run by the bucket's graph:

* the padding is *filler sequences* of at most ``max_len`` tokens each, which attend only to
  themselves, so the real tokens get the bits of the eager forward;
* ``cu_seqlens`` has a fixed number of slots per bucket (:func:`slots`); the slots past the last
  sequence are empty (zero-length) sequences;
* the attention's longest sequence is the model's position limit in every replay (a bound the
  kernel only uses for its grid).

A batch with more tokens than the largest bucket, or more sequences than its bucket's slots,
runs eagerly. :class:`GraphCache` keeps at most ``max_graphs`` graphs, least recently used out
(each graph holds its own memory pool: the bound is on memory, not only on count).
``NLGSCORE_CUDA_GRAPHS=0`` turns graphs off.

>>> bucket_for(700), bucket_for(1025), bucket_for(70000)
(1024, 2048, None)
>>> plan = graph_plan([5, 3], bucket=16, max_len=6, slot_count=6)
>>> plan.lengths, plan.cu
([5, 3, 6, 2, 0, 0], [0, 5, 8, 14, 16, 16, 16])
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

__all__ = ["BUCKETS", "ENV_SWITCH", "GraphCache", "GraphPlan", "bucket_for", "graph_plan", "slots", "enabled"]

ENV_SWITCH = "NLGSCORE_CUDA_GRAPHS"
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
    return os.environ.get(ENV_SWITCH, "").strip() != "0"


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
    """At most ``max_graphs`` captured graphs by bucket, the least recently used dropped first.

    ``capture(bucket)`` makes one (on a miss). Dropping a graph drops the last reference to it
    and to its memory pool, which PyTorch's caching allocator then reuses.

    >>> made = []
    >>> cache = GraphCache(lambda bucket: made.append(bucket) or f"graph {bucket}", max_graphs=2)
    >>> [cache.get(b) for b in (1024, 2048, 1024, 4096)][-1], sorted(cache.buckets()), made
    ('graph 4096', [1024, 4096], [1024, 2048, 4096])
    """

    def __init__(self, capture: Callable[[int], Any], max_graphs: int = DEFAULT_MAX_GRAPHS) -> None:
        if max_graphs < 1:
            raise ValueError(f"max_graphs must be at least 1, got {max_graphs}")
        self.capture, self.max_graphs = capture, max_graphs
        self._graphs: "OrderedDict[int, Any]" = OrderedDict()
        self.captures = 0

    def get(self, bucket: int) -> Any:
        graph = self._graphs.get(bucket)
        if graph is not None:
            self._graphs.move_to_end(bucket)
            return graph
        while len(self._graphs) >= self.max_graphs:
            self._graphs.popitem(last=False)
        graph = self._graphs[bucket] = self.capture(bucket)
        self.captures += 1
        return graph

    def buckets(self) -> List[int]:
        return list(self._graphs)


class CapturedForward:
    """One bucket's captured token forward: static inputs, the graph, its static output."""

    def __init__(self, forward: Any, bucket: int, slot_count: int, max_len: int, device: Any, filler: Dict[str, int]):
        import torch

        self.ids = torch.full((bucket,), filler["id"], dtype=torch.long, device=device)
        self.positions = torch.full((bucket,), filler["position"], dtype=torch.long, device=device)
        self.cu = torch.zeros(slot_count + 1, dtype=torch.int32, device=device)
        plan = graph_plan([], bucket, max_len, slot_count)
        self.cu.copy_(torch.tensor(plan.cu, dtype=torch.int32))  # type: ignore[union-attr]
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):  # warm-up off the capture: allocator, kernels' first-use set-up
            for _ in range(2):
                forward.run(self.ids, self.positions, plan.lengths, cu=self.cu, longest=max_len)  # type: ignore[union-attr]
        torch.cuda.current_stream(device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = forward.run(self.ids, self.positions, plan.lengths, cu=self.cu, longest=max_len)  # type: ignore[union-attr]

    def replay(self, ids: Any, positions: Any, cu: Any, tokens: int) -> Any:
        """The hidden states of the first ``tokens`` tokens (valid until the next replay)."""
        self.ids.copy_(ids, non_blocking=True)
        self.positions.copy_(positions, non_blocking=True)
        self.cu.copy_(cu, non_blocking=True)
        self.graph.replay()
        return self.out[:tokens]
