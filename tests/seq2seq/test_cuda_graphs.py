"""The seq2seq token forward's CUDA graphs, in the parts a CPU runs: the pair layout of a
(source bucket, target bucket) graph and its refusals, the embedding's host/device split, the
static-tensor forward a graph captures (run eagerly on a graph's padded layout: the real pairs
keep the eager token forward's bits), and the engine's graph path with the capture left out.
The capture and replay themselves need CUDA."""

import random
from collections import Counter

import numpy as np
import pytest
import torch
from test_likelihood_token_forward import _golden, _pairs

from nlgscore.backend import graph_buckets
from nlgscore.backend.packed_attention import cu_seqlens
from nlgscore.seq2seq.cuda_graphs import PairGraphs, pair_plan, pair_slots
from nlgscore.seq2seq.likelihood import _Engine, target_logprobs
from nlgscore.seq2seq.token_forward import PairInputs, Seq2SeqTokenForward


def _check_plan(plan, sources, targets, max_source, max_target):
    slot_count = pair_slots(plan.source_bucket, plan.target_bucket, max_source, max_target)
    assert len(plan.source_lengths) == len(plan.target_lengths) == slot_count
    assert plan.source_lengths[: len(sources)] == list(sources) and plan.target_lengths[: len(targets)] == list(targets)
    assert plan.pairs == len(sources) and plan.target_tokens == sum(targets)
    assert sum(plan.source_lengths) == plan.source_bucket and sum(plan.target_lengths) == plan.target_bucket
    assert plan.target_bucket == graph_buckets.bucket_for(sum(targets))
    assert plan.source_bucket >= graph_buckets.bucket_for(sum(sources))
    assert plan.cu_source == cu_seqlens(plan.source_lengths) and plan.cu_target == cu_seqlens(plan.target_lengths)
    assert plan.cu_source[-1] == plan.source_bucket and plan.cu_target[-1] == plan.target_bucket
    assert all(0 <= n <= max_source for n in plan.source_lengths)
    assert all(0 <= n <= max_target for n in plan.target_lengths)
    # every target slot has keys to attend to: a non-empty source in its own slot
    assert all(s > 0 for s, t in zip(plan.source_lengths, plan.target_lengths) if t > 0)
    # the filler parts of each side are near-equal
    fill_s = [n for n in plan.source_lengths[len(sources) :] if n]
    fill_t = [n for n in plan.target_lengths[len(targets) :] if n]
    assert max(fill_s, default=0) - min(fill_s, default=0) <= 1 and max(fill_t, default=0) - min(fill_t, default=0) <= 1


def test_pair_plans_fill_both_buckets_with_keys_for_every_target():
    rng = random.Random(0)
    checked = 0
    for _ in range(400):
        max_source, max_target = rng.choice([(64, 64), (512, 128), (1024, 1024), (40, 300)])
        pairs = rng.randint(1, 150)
        sources = [rng.randint(1, max_source) for _ in range(pairs)]
        targets = [rng.randint(1, max_target) for _ in range(pairs)]
        plan = pair_plan(sources, targets, max_source, max_target)
        target_bucket = graph_buckets.bucket_for(sum(targets))
        fits = (
            target_bucket is not None
            and graph_buckets.bucket_for(sum(sources) + -(-(target_bucket - sum(targets)) // max_target)) is not None
            and pairs <= max(graph_buckets.MIN_SLOTS, target_bucket // graph_buckets.TOKENS_PER_SLOT)
        )
        assert (plan is not None) == fits, (sources, targets)  # a batch that fits its buckets is taken
        if plan is not None:
            _check_plan(plan, sources, targets, max_source, max_target)
            checked += 1
    assert checked > 100
    # exactly full buckets: no filler at all, only empty slots
    plan = pair_plan([512, 512], [512, 512], 512, 512)
    assert plan.key == (1024, 1024) and plan.source_lengths[2:] == [0] * (len(plan.source_lengths) - 2)
    # a full source bucket with filler targets moves the sources to the next bucket
    plan = pair_plan([512, 512], [5, 5], 512, 512)
    assert plan.key == (2048, 1024) and plan.target_lengths[2:5] == [507, 507, 0]
    assert plan.source_lengths[2:5] == [512, 512, 0]
    _check_plan(plan, [512, 512], [5, 5], 512, 512)


def test_pair_plans_refuse_what_no_graph_takes():
    assert pair_plan([600], [3], 512, 512) is None  # a source past its maximum
    assert pair_plan([3], [513], 512, 512) is None  # a target past its maximum
    assert pair_plan([0], [3], 512, 512) is None and pair_plan([3], [0], 512, 512) is None  # empty sides
    assert pair_plan([3, 4], [3], 512, 512) is None and pair_plan([], [], 512, 512) is None
    assert pair_plan([1] * 130, [512] * 130, 512, 512) is None  # targets past the largest bucket
    assert pair_plan([512] * 130, [1] * 130, 512, 512) is None  # sources past it
    assert pair_plan([2] * 200, [2] * 200, 512, 512) is None  # more pairs than the slots
    assert pair_plan([2] * 128, [2] * 128, 512, 512) is not None  # as many as the real slots


def test_the_bucket_helpers_are_still_bertscores():
    from nlgscore.bertscore import cuda_graphs

    for name in graph_buckets.__all__:
        assert getattr(cuda_graphs, name) is getattr(graph_buckets, name), name
    assert cuda_graphs.CapturedForward.__module__ == "nlgscore.bertscore.cuda_graphs"


@pytest.mark.parametrize("name", ["tiny-bart", "tiny-prism"])
def test_the_embeddings_host_and_device_halves_give_the_models_bits(kernel, name):
    """The embedding in two halves (ids and position rows on the host, the lookups on the device)
    gives each sequence's bits of the model's own stacks' first hidden state, alone."""
    model = _golden(name)
    forward = Seq2SeqTokenForward(model)
    srcs, tgts = _pairs(model.config.vocab_size, seed=4, n=6)  # the sixth target holds a padding id
    inputs = [(2,) + t[:-1] for t in tgts]
    with torch.inference_mode():
        for stack, seqs in ((forward.encoder, srcs), (forward.decoder, inputs)):
            ids, rows = forward.host_inputs(stack, seqs)
            assert ids.device.type == rows.device.type == "cpu" and ids.shape == rows.shape == (sum(map(len, seqs)),)
            packed = forward.embed_rows(stack, ids, rows)
            assert torch.equal(packed, forward._embed(stack, seqs))
            first = cu_seqlens([len(s) for s in seqs])
            for i, seq in enumerate(seqs):
                row = torch.tensor([seq])
                if stack is forward.encoder:
                    own = stack(input_ids=row, output_hidden_states=True).hidden_states[0][0]
                else:
                    memory = torch.zeros(1, 3, model.config.d_model)
                    own = stack(input_ids=row, encoder_hidden_states=memory, output_hidden_states=True)
                    own = own.hidden_states[0][0]
                assert torch.equal(packed[first[i] : first[i + 1]], own), (stack is forward.encoder, i)


@pytest.mark.parametrize("name", ["tiny-bart", "tiny-prism"])
def test_a_graphs_pair_layout_leaves_the_real_targets_bits(kernel, name):
    """What a graph replays, run eagerly on CPU: the static-tensor forward on the batch padded to
    its buckets (filler pairs, empty slots, each pair's source in its own slot) gives the real
    targets the eager token forward's bits, and the filler states are finite (every filler target
    has keys)."""
    model = _golden(name)
    forward = Seq2SeqTokenForward(model)
    srcs, tgts = _pairs(model.config.vocab_size, seed=2, n=9)
    inputs = [(2,) + t[:-1] for t in tgts]
    graphs = PairGraphs(forward, filler_id=2, max_source=200, max_target=150)
    laid = graphs.layout(srcs, inputs)
    plan = laid.plan
    assert plan.key == (1024, 1024) and plan.pairs == len(srcs)
    assert sum(1 for n in plan.target_lengths[plan.pairs :] if n) >= 4  # several filler targets
    assert laid.source_ids.shape == laid.source_rows.shape == (1024,) and laid.cu_target.tolist() == plan.cu_target
    table = forward.decoder.embed_positions
    rows = (table.weights if hasattr(table, "weights") else table.weight).shape[0]
    assert laid.cu_source.dtype == torch.int32 and int(laid.target_rows.max()) < rows  # inside the table
    distinct = sorted(set(srcs), key=srcs.index)
    with torch.inference_mode():
        source = PairInputs(laid.source_ids, laid.source_rows, plan.source_lengths, None, graphs.max_source)
        target = PairInputs(laid.target_ids, laid.target_rows, plan.target_lengths, None, graphs.max_target)
        out = forward.run_pairs(source, target)
        states = forward.encode(distinct)
        first = cu_seqlens([len(s) for s in distinct])
        per_source = [states[first[j] : first[j + 1]] for j in range(len(distinct))]
        eager = forward.decode(inputs, per_source, [distinct.index(s) for s in srcs])
    assert out.shape == (plan.target_bucket, model.config.d_model) and bool(torch.isfinite(out).all())
    assert torch.equal(out[: plan.target_tokens], eager)
    # graphs are CUDA's: on CPU the engine never takes them
    assert not graphs.uses_graphs(torch.device("cpu"), torch.bfloat16)
    assert graphs.replayed(srcs, inputs) is None and graphs.graphs.captures == 0


def _replayed_eagerly(self, sources, inputs):
    """PairGraphs.replayed with the capture left out (CUDA's): the same layout and static-tensor
    forward, run eagerly, so the engine's graph path runs on CPU."""
    laid = self.layout(sources, inputs)
    if laid is None:
        return None
    plan = laid.plan
    source = PairInputs(laid.source_ids, laid.source_rows, plan.source_lengths, None, self.max_source)
    target = PairInputs(laid.target_ids, laid.target_rows, plan.target_lengths, None, self.max_target)
    return self.forward.run_pairs(source, target)[: plan.target_tokens]


def test_the_engines_graph_path_keeps_order_duplicates_and_bookkeeping(kernel, monkeypatch):
    model = _golden("tiny-bart")
    srcs, tgts = _pairs(model.config.vocab_size, seed=3, n=12)
    srcs, tgts = srcs + srcs[:2], tgts + tgts[:2]  # identical pairs again
    eager = target_logprobs(model, srcs, tgts, pad_id=1, decoder_start_id=2, token_forward=True, max_tokens=120)
    monkeypatch.setattr(PairGraphs, "replayed", _replayed_eagerly)
    laid = target_logprobs(model, srcs, tgts, pad_id=1, decoder_start_id=2, token_forward=True, max_tokens=120)
    assert all(np.array_equal(a, b) for a, b in zip(laid, eager)) and len(laid) == len(srcs)
    # the cache: a source cached by an eager batch is dropped when a graph batch finishes it
    engine = _Engine(model, 1, 2, 1.0, Counter([0, 0, 1]), 10_000, True)
    keys = [srcs[0], srcs[1]]
    monkeypatch.setattr(PairGraphs, "replayed", lambda self, sources, inputs: None)
    engine.run([0, 1], keys, [tgts[0], tgts[1]])  # eager: source 0 has a pair left, so it is cached
    assert list(engine.cache) == [0] and engine.cached == len(srcs[0])
    monkeypatch.setattr(PairGraphs, "replayed", _replayed_eagerly)
    graph = engine.run([0], keys, [tgts[4]])  # by the graph path: source 0 is done
    assert not engine.cache and engine.cached == 0 and engine.pending[0] == 0
    assert srcs[4] == srcs[0] and np.array_equal(graph[0], eager[4])
