"""CUDA graphs of the seq2seq token forward, one per (source bucket, target bucket).

The likelihood engine's token forward (:mod:`nlgscore.seq2seq.token_forward`) launches every
product tile, norm and attention call of both stacks, so a small batch on a GPU waits on its
launches, as BERTScore's did before its graphs (:mod:`nlgscore.bertscore.cuda_graphs`). The same
cure applies: a batch is padded to fixed shapes and replayed from a graph captured for them. Two
sides change the layout:

* **pairs in slots.** Slot ``i`` holds pair ``i``'s source (encoder side) and target (decoder
  side), and the target attends across to its own slot's source only, so the cross-attention keys
  are the encoder's output as it stands (``cu_seqlens`` of the source side, no gather). A source
  shared by several pairs is encoded once per pair here, which gives the same bits (every row is
  computed row-invariantly); the eager path's encode-once and its source cache are not used.
* **two buckets.** The targets are padded to their bucket (:func:`~nlgscore.backend.graph_buckets.bucket_for`)
  with filler targets; the sources to theirs, with at least one filler source token per filler
  target, so no target slot has zero keys to attend to. Filler pairs attend only to themselves.

The graph's output is the decoder's states of the whole target bucket; the LM head runs eagerly
on the real targets' rows only (a bucket of logits would be bucket x vocabulary). A batch that no
bucket pair takes (too many tokens or pairs, a sequence past the model's position limit) runs the
eager token forward. :class:`~nlgscore.backend.graph_buckets.GraphCache` keeps at most
``max_graphs`` graphs; ``NLGSCORE_CUDA_GRAPHS=0`` turns them off.

>>> plan = pair_plan([5, 3], [4, 6], max_source=512, max_target=512)
>>> plan.key, plan.source_lengths[:5], plan.target_lengths[:5], len(plan.source_lengths)
((1024, 1024), [5, 3, 508, 508, 0], [4, 6, 507, 507, 0], 130)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from nlgscore.backend.graph_buckets import DEFAULT_MAX_GRAPHS, MIN_SLOTS, TOKENS_PER_SLOT, GraphCache, bucket_for
from nlgscore.backend.graph_buckets import enabled as graphs_enabled
from nlgscore.backend.packed_attention import cu_seqlens
from nlgscore.backend.transfer import to_device

__all__ = ["CapturedSeq2Seq", "PairGraphs", "PairLayout", "PairPlan", "pair_plan", "pair_slots"]


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def pair_slots(source_bucket: int, target_bucket: int, max_source: int, max_target: int) -> int:
    """Pairs a (source bucket, target bucket) graph takes: real pairs up to an eighth of the
    target bucket (at least 64), as :func:`~nlgscore.backend.graph_buckets.slots` counts
    sequences, then the most filler pairs either side's filler can need.

    >>> pair_slots(1024, 1024, 512, 512), pair_slots(4096, 1024, 1024, 1024)
    (130, 132)
    """
    filler = max(_ceil(target_bucket, max_target), _ceil(source_bucket, max_source))
    return max(MIN_SLOTS, target_bucket // TOKENS_PER_SLOT) + filler


@dataclass
class PairPlan:
    """Pairs laid out for a (source bucket, target bucket) graph: every slot's source and target
    length (real pairs first, then filler pairs, then empty slots) and their ``cu_seqlens``."""

    source_bucket: int
    target_bucket: int
    pairs: int  # real pairs: the first slots
    target_tokens: int  # real target tokens: the first rows of the target side
    source_lengths: List[int]
    target_lengths: List[int]
    cu_source: List[int]
    cu_target: List[int]

    @property
    def key(self) -> Tuple[int, int]:
        return self.source_bucket, self.target_bucket


def _split(total: int, parts: int) -> List[int]:
    """``total`` in ``parts`` near-equal parts, the larger first."""
    if parts == 0:
        return []
    size, extra = divmod(total, parts)
    return [size + 1] * extra + [size] * (parts - extra)


def pair_plan(
    source_lengths: Sequence[int], target_lengths: Sequence[int], max_source: int, max_target: int
) -> Optional[PairPlan]:
    """The slots of pairs of ``source_lengths``/``target_lengths`` tokens in their buckets' graph,
    filler of at most ``max_source``/``max_target`` tokens a sequence; None (eager) where a
    length is past its maximum, no bucket holds a side, or the pairs and filler outnumber the slots.

    >>> pair_plan([600], [3], max_source=512, max_target=512) is None  # a source past the limit
    True
    >>> plan = pair_plan([10], [1000], max_source=512, max_target=1024)
    >>> plan.source_lengths[:4], plan.target_lengths[:4]
    ([10, 507, 507, 0], [1000, 24, 0, 0])
    """
    if len(source_lengths) != len(target_lengths) or not target_lengths:
        return None
    if any(n < 1 or n > max_source for n in source_lengths) or any(n < 1 or n > max_target for n in target_lengths):
        return None
    source_tokens, target_tokens = sum(source_lengths), sum(target_lengths)
    target_bucket = bucket_for(target_tokens)
    if target_bucket is None:
        return None
    target_fill = target_bucket - target_tokens
    filler_targets = _ceil(target_fill, max_target)
    # A filler target needs at least one source token to attend to (an empty key set has no softmax).
    source_bucket = bucket_for(source_tokens + filler_targets)
    if source_bucket is None:
        return None
    source_fill = source_bucket - source_tokens
    filler = max(filler_targets, _ceil(source_fill, max_source))
    slot_count = pair_slots(source_bucket, target_bucket, max_source, max_target)
    if len(source_lengths) + filler > slot_count:
        return None
    empty = slot_count - len(source_lengths) - filler
    sources = list(source_lengths) + _split(source_fill, filler) + [0] * empty
    targets = list(target_lengths) + _split(target_fill, filler_targets) + [0] * (filler - filler_targets + empty)
    return PairPlan(
        source_bucket,
        target_bucket,
        len(source_lengths),
        target_tokens,
        sources,
        targets,
        cu_seqlens(sources),
        cu_seqlens(targets),
    )


@dataclass
class PairLayout:
    """A batch's host inputs for its graph: the plan, each side's ids and position rows (long,
    bucket-sized) and ``cu_seqlens`` (int32)."""

    plan: PairPlan
    source_ids: Any
    source_rows: Any
    target_ids: Any
    target_rows: Any
    cu_source: Any
    cu_target: Any


class CapturedSeq2Seq:
    """One (source bucket, target bucket)'s captured encoder + decoder: static inputs, the graph,
    its static output (the decoder states of the target bucket)."""

    def __init__(self, forward: Any, layout: PairLayout, max_source: int, max_target: int, device: Any) -> None:
        import torch

        from nlgscore.seq2seq.token_forward import PairInputs

        forward.reserve_positions(max(max_source, max_target))
        # The graph reads the position tables it was captured with; a later growth replaces them
        # (same rows, more of them), so the captured ones are kept alive with the graph.
        self.tables = forward.position_tables()
        plan = layout.plan
        host = (layout.source_ids, layout.source_rows, layout.target_ids, layout.target_rows)
        self.source_ids, self.source_rows, self.target_ids, self.target_rows = (t.to(device) for t in host)
        self.cu_source, self.cu_target = layout.cu_source.to(device), layout.cu_target.to(device)
        source = PairInputs(self.source_ids, self.source_rows, plan.source_lengths, self.cu_source, max_source)
        target = PairInputs(self.target_ids, self.target_rows, plan.target_lengths, self.cu_target, max_target)
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):  # warm-up off the capture: allocator, kernels' first-use set-up
            for _ in range(2):
                forward.run_pairs(source, target)
        torch.cuda.current_stream(device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = forward.run_pairs(source, target)

    def replay(self, layout: PairLayout, device: Any) -> Any:
        """The decoder states of the real target tokens (valid until the next replay)."""
        pairs = (
            (self.source_ids, layout.source_ids),
            (self.source_rows, layout.source_rows),
            (self.target_ids, layout.target_ids),
            (self.target_rows, layout.target_rows),
            (self.cu_source, layout.cu_source),
            (self.cu_target, layout.cu_target),
        )
        for static, host in pairs:
            static.copy_(to_device(host, device), non_blocking=True)
        self.graph.replay()
        return self.out[: layout.plan.target_tokens]


class PairGraphs:
    """The graphs of one model's token forward, by (source bucket, target bucket): a batch of
    pairs laid out (:meth:`layout`) and replayed (:meth:`replayed`), made on first use.

    ``filler_id``: the token of filler sequences, a non-padding id (M2M100 counts the positions
    of non-padding tokens only). ``max_source``/``max_target``: the longest sequence either side
    takes (the position table's), the attention's bound in every replay.
    """

    def __init__(
        self, forward: Any, filler_id: int, max_source: int, max_target: int, max_graphs: int = DEFAULT_MAX_GRAPHS
    ) -> None:
        self.forward, self.filler_id = forward, filler_id
        self.max_source, self.max_target = max_source, max_target
        self.graphs = GraphCache(self._capture, max_graphs)
        self._pending: Optional[PairLayout] = None

    def uses_graphs(self, device: Any, dtype: Any) -> bool:
        """Whether batches on ``device`` in ``dtype`` run by a graph: where attention is one varlen
        call (CUDA, 16-bit) and ``NLGSCORE_CUDA_GRAPHS`` is not 0."""
        import torch

        on_cuda = getattr(device, "type", device) == "cuda"
        return on_cuda and dtype in (torch.bfloat16, torch.float16) and graphs_enabled()

    def layout(self, sources: Sequence[Sequence[int]], inputs: Sequence[Sequence[int]]) -> Optional[PairLayout]:
        """The host inputs of pairs (``sources[i]`` with decoder inputs ``inputs[i]``) padded to
        their buckets; None where no graph takes them."""
        import torch

        plan = pair_plan([len(s) for s in sources], [len(t) for t in inputs], self.max_source, self.max_target)
        if plan is None:
            return None
        sides = []
        for stack, real, lengths in (
            (self.forward.encoder, sources, plan.source_lengths),
            (self.forward.decoder, inputs, plan.target_lengths),
        ):
            seqs = list(real) + [(self.filler_id,) * n for n in lengths[len(real) :]]
            sides.append(self.forward.host_inputs(stack, seqs))
        (source_ids, source_rows), (target_ids, target_rows) = sides
        cu_source, cu_target = (torch.tensor(cu, dtype=torch.int32) for cu in (plan.cu_source, plan.cu_target))
        return PairLayout(plan, source_ids, source_rows, target_ids, target_rows, cu_source, cu_target)

    def replayed(self, sources: Sequence[Sequence[int]], inputs: Sequence[Sequence[int]]) -> Any:
        """The decoder states of the real target tokens ``(tokens, hidden)`` by the batch's graph
        (valid until the next replay); None where graphs are not used or no graph takes it."""
        weight = next(self.forward.model.parameters())
        if not self.uses_graphs(weight.device, weight.dtype):
            return None
        laid = self.layout(sources, inputs)
        if laid is None:
            return None
        self._pending = laid
        captured = self.graphs.get(laid.plan.key)
        return captured.replay(laid, weight.device)

    def _capture(self, key: Tuple[int, int]) -> CapturedSeq2Seq:
        assert self._pending is not None and self._pending.plan.key == key
        device = next(self.forward.model.parameters()).device
        return CapturedSeq2Seq(self.forward, self._pending, self.max_source, self.max_target, device)
