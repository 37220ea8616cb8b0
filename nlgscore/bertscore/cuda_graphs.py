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
``NLGSCORE_CUDA_GRAPHS=0`` turns graphs off. The buckets, the layout and the cache are
:mod:`nlgscore.backend.graph_buckets`' (shared with the seq2seq engine's graphs); the capture of
BERTScore's forward (:class:`CapturedForward`) is here.

>>> plan = graph_plan([300, 40], bucket_for(340), max_len=512, slot_count=slots(1024, 512))
>>> plan.bucket, plan.lengths[:5], len(plan.lengths)
(1024, [300, 40, 512, 172, 0], 130)
"""

from __future__ import annotations

from typing import Any, Dict

# The bucket layout and the graph cache are the backend's (the seq2seq engine captures graphs
# too); re-exported here, where BERTScore's callers and tests have always found them.
from nlgscore.backend import graph_buckets
from nlgscore.backend.graph_buckets import (  # noqa: F401 (re-exported by __all__)
    BUCKETS,
    DEFAULT_MAX_GRAPHS,
    ENV_SWITCH,
    MIN_SLOTS,
    TOKENS_PER_SLOT,
    GraphCache,
    GraphPlan,
    bucket_for,
    enabled,
    graph_plan,
    slots,
)

__all__ = ["CapturedForward", *graph_buckets.__all__]


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
