"""The token forward (every layer on packed tokens, attention per sequence): the padded forward's
numbers, and a text's bits independent of what it is packed with, on both CPU kernels; wired into
BERTScore by NLGSCORE_TOKEN_FORWARD=1 and recorded in the signature. On CPU the attention is the
per-sequence reference of the CUDA varlen kernel, so these tests hold the packing, the positions,
the tiles and the scatter back to the padded layout that the CUDA path shares."""

import pytest
import torch
import torch.nn.functional as F

from nlgscore.backend import gemm
from nlgscore.bertscore.packed_encoder import PackedEncoder
from nlgscore.bertscore.token_forward import ENV_SWITCH, TokenForward, tiled_linear, varlen_attention

# float32 outputs of unit scale, after two layers whose attention sums run in another order than
# the padded forward's (per sequence, not over a padded, masked row): measured <= 1e-6; 1e-5 leaves
# room for either CPU kernel (the same bound as the packed forward's tests).
TOLERANCE = 1e-5


@pytest.fixture(params=["0", "1"])
def kernel(request, monkeypatch):
    """Each test on both CPU kernels (oneDNN and MKL), the availability cache cleared around it."""
    monkeypatch.setenv(gemm.ENV_SWITCH, request.param)
    gemm.onednn_available.cache_clear()
    yield request.param
    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    gemm.onednn_available.cache_clear()


def _model(kind: str):
    from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel

    torch.manual_seed(3)
    shape = dict(hidden_size=48, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96, vocab_size=80)
    if kind == "roberta":  # positions count from the padding index + 1
        return RobertaModel(RobertaConfig(**shape, max_position_embeddings=160, pad_token_id=1)).eval()
    return BertModel(BertConfig(**shape, max_position_embeddings=160)).eval()


def _batch(lengths, pad: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.full((len(lengths), width), pad, dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(4, 80, (n,), generator=generator)
    mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).long()
    return ids, mask


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_the_token_forward_gives_the_padded_forwards_numbers(kernel, kind):
    model = _model(kind)
    forward = TokenForward(PackedEncoder.build(model))
    lengths = [7, 3, 20, 1, 12]
    ids, mask = _batch(lengths, model.config.pad_token_id)
    real = mask.bool()
    with torch.inference_mode():
        padded = model(input_ids=ids, attention_mask=mask)[0]
        packed = forward.run(ids[real], forward.positions(ids, mask)[real], lengths)
        (grouped,) = forward.forward_groups([(ids, mask)], [(ids, mask)])
    assert packed.shape == (sum(lengths), model.config.hidden_size)
    assert (packed - padded[real]).abs().max() < TOLERANCE
    assert torch.equal(grouped[real], packed) and bool((grouped[~real] == 0).all())  # scattered back, zero on padding


def test_a_texts_bits_do_not_depend_on_what_it_is_packed_with(kernel):
    model = _model("roberta")
    forward = TokenForward(PackedEncoder.build(model))
    lengths = [9, 30, 2, 17, 64, 5]
    ids, mask = _batch(lengths, model.config.pad_token_id, seed=1)
    real = mask.bool()
    positions = forward.positions(ids, mask)
    with torch.inference_mode():
        together = forward.run(ids[real], positions[real], lengths)
        starts = [0]
        for n in lengths:
            starts.append(starts[-1] + n)
        for row, n in enumerate(lengths):
            alone = forward.run(ids[row, :n], positions[row, :n], [n])
            assert torch.equal(alone, together[starts[row] : starts[row + 1]]), row
        # reversed order: the same rows, moved
        order = list(reversed(range(len(lengths))))
        flipped = forward.run(
            torch.cat([ids[r, : lengths[r]] for r in order]),
            torch.cat([positions[r, : lengths[r]] for r in order]),
            [lengths[r] for r in order],
        )
    assert torch.equal(flipped[: lengths[-1]], together[starts[-2] :])


def test_per_sequence_attention_is_masked_attention_over_the_padded_batch():
    generator = torch.Generator().manual_seed(2)
    lengths, heads, size = [5, 1, 11], 2, 8
    q, k, v = (torch.randn(sum(lengths), heads, size, generator=generator) for _ in range(3))
    out = varlen_attention(q, k, v, lengths)
    start = 0
    width = max(lengths)
    for n in lengths:
        pad = [
            torch.cat([t[start : start + n], t.new_zeros(width - n, heads, size)]).transpose(0, 1)[None]
            for t in (q, k, v)
        ]
        keys = (torch.arange(width) < n)[None, None, None, :]
        expected = F.scaled_dot_product_attention(*pad, attn_mask=keys)[0].transpose(0, 1)[:n]
        assert (out[start : start + n] - expected).abs().max() < TOLERANCE
        start += n


def test_row_tiles_give_the_untiled_products_bits_on_cpu():
    """The CUDA products run in tiles of one shape; on CPU a row's bits do not depend on its
    product's row count from MIN_ROWS rows up (nlgscore.backend.gemm), so tiling must change
    nothing: a check of the tiling's arithmetic (offsets, the padded last tile, the slice)."""
    generator = torch.Generator().manual_seed(4)
    x, weight, bias = (
        torch.randn(300, 24, generator=generator),
        torch.randn(40, 24, generator=generator),
        torch.randn(40),
    )
    with torch.inference_mode():
        assert torch.equal(tiled_linear(x, weight, bias, tile=128), F.linear(x, weight, bias))
        assert tiled_linear(x[:0], weight, bias).shape == (0, 40)


def test_bertscore_with_the_token_forward(monkeypatch):
    import nlgscore

    cands = ["The cat sat on the mat.", "A dog.", "", "It is raining heavily in the north today."]
    refs = ["A cat sat on a mat.", "The dog barked.", "Nothing.", "Heavy rain falls in the north."]
    plain = nlgscore.load("bertscore:minilm", num_layers=2).compute(cands, refs)
    monkeypatch.setenv(ENV_SWITCH, "1")
    scorer = nlgscore.load("bertscore:minilm", num_layers=2)
    together = scorer.compute(cands, refs)
    assert together.signature["forward"] == "tokens" and "forward" not in plain.signature
    assert max(abs(a - b) for a, b in zip(together.scores, plain.scores)) < TOLERANCE
    alone = [scorer.compute([c], [r]).scores[0] for c, r in zip(cands, refs)]
    assert alone == together.scores  # the same bits in any batch


def test_a_graphs_padded_layout_leaves_the_real_tokens_bits(kernel):
    """A CUDA graph runs the batch padded to its bucket: filler sequences of at most max_len tokens
    and empty slots. Run eagerly on CPU with that layout, the real tokens keep their bits (the
    filler attends only to itself), and the filler's positions stay inside the position table."""
    from nlgscore.bertscore.cuda_graphs import BUCKETS, slots

    model = _model("roberta")
    forward = TokenForward(PackedEncoder.build(model), max_len=40)
    lengths = [9, 30, 2, 17]
    ids, mask = _batch(lengths, model.config.pad_token_id, seed=6)
    real = mask.bool()
    packed_ids, packed_positions = ids[real], forward.positions(ids, mask)[real]
    plan, full_ids, full_positions, cu = forward.layout(packed_ids, packed_positions, lengths)
    assert plan.bucket == BUCKETS[0] and len(plan.lengths) == slots(plan.bucket, 40) and plan.cu[-1] == plan.bucket
    assert cu.tolist() == plan.cu and max(plan.lengths) <= 40
    assert int(full_positions.max()) < model.config.max_position_embeddings
    with torch.inference_mode():
        eager = forward.run(packed_ids, packed_positions, lengths)
        laid = forward.run(full_ids, full_positions, plan.lengths, longest=40)
    assert torch.equal(laid[: plan.tokens], eager)
    assert not forward.uses_graphs(torch.device("cpu"), torch.bfloat16)  # graphs are CUDA's


def test_the_graph_cache_is_bounded_and_switchable(monkeypatch):
    from nlgscore.bertscore import cuda_graphs

    made = []
    cache = cuda_graphs.GraphCache(lambda bucket: made.append(bucket) or object(), max_graphs=2)
    for bucket in [1024, 2048, 1024, 4096, 2048, 2048]:
        cache.get(bucket)
    assert len(cache.buckets()) == 2 and made == [1024, 2048, 4096, 2048] and cache.captures == 4
    with pytest.raises(ValueError, match="max_graphs"):
        cuda_graphs.GraphCache(lambda bucket: None, max_graphs=0)
    assert cuda_graphs.graph_plan([600], 1024, 512, 8) is None  # a sequence past max_len: eager
    assert cuda_graphs.graph_plan([2] * 200, 1024, 512, 130) is None  # more sequences than slots: eager
    monkeypatch.setenv(cuda_graphs.ENV_SWITCH, "0")
    assert not cuda_graphs.enabled()
    monkeypatch.setenv(cuda_graphs.ENV_SWITCH, "1")
    assert cuda_graphs.enabled()
