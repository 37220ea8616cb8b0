"""The CPU fast paths: oneDNN linears, the packed encoder's attention, direct tokenisation.

Each one must give the numbers of the plain path (to float rounding) and fall back where it
cannot run; none of these tests times anything.
"""

import doctest
import gc

import pytest
import torch
import torch.nn.functional as F

from nlgscore.backend import gemm, product_rows
from nlgscore.backend.models import resolve
from nlgscore.backend.text_tokens import FrontTokenizer, content_ids
from nlgscore.bertscore import packed_encoder


@pytest.fixture
def onednn_switch(monkeypatch):
    """Set ``NLGSCORE_ONEDNN`` for one test; the availability cache is cleared before and after."""

    def switch(value: str) -> bool:
        """Whether oneDNN runs under ``value``: the switch allows it and this build has it."""
        monkeypatch.setenv(gemm.ENV_SWITCH, value)
        gemm.onednn_available.cache_clear()
        return value != "0" and gemm.onednn_available()

    yield switch
    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    gemm.onednn_available.cache_clear()


def test_module_doctests():
    assert doctest.testmod(gemm).failed == 0
    assert doctest.testmod(packed_encoder).failed == 0


@pytest.mark.parametrize("shape", [(1, 24), (37, 24), (3, 5, 24), (2, 0, 24)])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("activation", [None, "gelu", "relu"])
def test_linear_matches_f_linear(shape, with_bias, activation):
    generator = torch.Generator().manual_seed(len(shape) * 7 + shape[0])
    x = torch.randn(shape, generator=generator)
    w = torch.randn(40, 24, generator=generator)
    b = torch.randn(40, generator=generator) if with_bias else None
    expected = F.linear(x, w, b)
    expected = {None: expected, "gelu": F.gelu(expected), "relu": F.relu(expected)}[activation]
    with torch.inference_mode():
        got = gemm.linear(x, w, b, activation)
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, atol=2e-5, rtol=1e-5)


def test_wrapped_linear_pickles():
    """Swapped models must still pickle (torch.save of a whole module, datasets fingerprints)."""
    import pickle

    layer = torch.nn.Linear(6, 3)
    restored = pickle.loads(pickle.dumps(gemm.wrap_linear(layer)))
    assert type(restored).__name__ == "OneDNNLinear" and isinstance(restored, torch.nn.Linear)
    x = torch.randn(2, 6)
    with torch.inference_mode():
        assert torch.allclose(restored(x), layer(x), atol=1e-5)


def test_linear_rejects_unknown_activation():
    with pytest.raises(ValueError, match="activation"):
        gemm.linear(torch.ones(2, 3), torch.ones(4, 3), activation="swish")


def test_linear_keeps_autograd_outside_inference():
    """The oneDNN op has no backward: with gradients on, F.linear must run and backprop must work."""
    w = torch.randn(5, 3, requires_grad=True)
    out = gemm.linear(torch.randn(4, 3), w, None, "gelu")
    out.sum().backward()
    assert w.grad is not None and w.grad.shape == w.shape


def test_switch_off_and_swap(onednn_switch):
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=60)
    torch.manual_seed(0)
    model = BertModel(config).eval()
    ids = torch.tensor([[2, 5, 7, 9, 3], [2, 11, 3, 0, 0]])
    mask = (ids != 0).long()
    with torch.inference_mode():
        before = model(input_ids=ids, attention_mask=mask)[0]
    state = {k: v.clone() for k, v in model.state_dict().items()}
    plain = sum(type(m) is torch.nn.Linear for m in model.modules())

    assert onednn_switch("0") is False
    assert gemm.use_onednn_linears(model) == 0  # switched off: nothing swapped

    if not onednn_switch("1"):
        pytest.skip("this torch build has no oneDNN linear")
    assert gemm.use_onednn_linears(model) == plain > 0
    assert not any(type(m) is torch.nn.Linear for m in model.modules())
    after_state = model.state_dict()
    assert list(after_state) == list(state)  # same keys: checkpoints stay loadable
    assert all(torch.equal(after_state[k], v) for k, v in state.items())
    with torch.inference_mode():
        after = model(input_ids=ids, attention_mask=mask)[0]
    assert (after - before).abs().max() < 1e-5


def _bert(act: str, seed: int = 0):
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=96,
        vocab_size=80,
        max_position_embeddings=512,
        hidden_act=act,
    )
    return BertModel(config).eval()


@pytest.mark.parametrize("length", [6, packed_encoder.BMM_ATTENTION_MAX_LENGTH + 30])
@pytest.mark.parametrize("act", ["gelu", "gelu_new"])
def test_packed_encoder_matches_model(length, act):
    """Short batches take the matmul attention, long ones SDPA; fused and unfused activations."""
    model = _bert(act)
    packed = packed_encoder.PackedEncoder.build(model)
    assert packed is not None
    assert packed.activation == ("gelu" if act == "gelu" else None)
    generator = torch.Generator().manual_seed(length)
    lengths = [length, length - 3, 2, length // 2]
    ids = torch.zeros(len(lengths), length, dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(4, 80, (n,), generator=generator)
    mask = (torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]).long()
    with torch.inference_mode():
        expected = model(input_ids=ids, attention_mask=mask)[0] * mask[..., None]
        got = packed(ids, mask)
    assert got.shape == expected.shape
    assert (got - expected).abs().max() < 1e-5
    assert bool((got[mask == 0] == 0).all())  # padding rows are exact zeros


@pytest.mark.parametrize("kernel", ["0", "1"])
def test_one_forward_of_several_length_groups_gives_each_group_its_own_bits(onednn_switch, kernel):
    """forward_groups runs the projections once over every group's tokens and attention per group:
    each group's output is bit-identical to the group run alone, on both kernels, and
    the five groups (one past the matmul-attention length: SDPA) come back in order."""
    from nlgscore.backend.batching import length_groups, padded_length

    onednn_switch(kernel)
    model = _bert("gelu")
    packed = packed_encoder.PackedEncoder.build(model)
    generator = torch.Generator().manual_seed(5)
    lengths = [3, 40, 17, 16, 33, 5, 70, 18, 31, 150, 2]
    groups = []
    for group in length_groups(lengths):
        width = padded_length(max(lengths[i] for i in group))
        ids = torch.zeros(len(group), width, dtype=torch.long)
        for row, i in enumerate(group):
            ids[row, : lengths[i]] = torch.randint(4, 80, (lengths[i],), generator=generator)
        groups.append((ids, (ids != 0).long()))
    with torch.inference_mode():
        together = packed.forward_groups(groups)
        alone = [packed(ids, mask) for ids, mask in groups]
    assert len(groups) == 5 and [t.shape for t in together] == [a.shape for a in alone]
    assert all(torch.equal(t, a) for t, a in zip(together, alone))
    # Under oneDNN the 385 real tokens run as rows 0-384 and 384-400 (a tail of 1 real row and 15
    # padding rows), kept apart through every layer: the bits above cover that path.
    from nlgscore.backend.gemm import bucketed_rows, row_segments

    weight = packed.layers[0][0]
    expected = [(0, 384), (384, 400)] if kernel == "1" else [(0, 385)]
    with torch.inference_mode():
        hidden = torch.zeros(1, weight.shape[1])
        assert row_segments(bucketed_rows(sum(lengths), hidden, weight), hidden, weight) == expected


@pytest.mark.parametrize("seed", range(5))
def test_packed_plan_covers_every_text_once_within_the_budget(seed):
    from nlgscore.backend.batching import plan_packed

    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 90, (300,), generator=generator).tolist() + [3000]  # one over the budget
    batches = plan_packed(lengths, max_tokens=2048, max_batch_size=64, multiple=product_rows.ROW_BUCKET)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in batch) <= 2048 or len(batch) == 1 for batch in batches)
    assert all(len(batch) <= 64 for batch in batches)
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(flat, reverse=True)  # longest first: each batch spans few padded lengths


def test_content_ids_match_the_tokenizer_call():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    texts = ["The cat sat.", "", "Ünïcödé [SEP] 日本語", "a " * 700]
    expected = tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
    assert content_ids(tokenizer, texts) == expected
    # A backend left with truncation set must not be called directly (it would cut the texts).
    tokenizer.backend_tokenizer.enable_truncation(8)
    try:
        assert content_ids(tokenizer, texts) == expected
    finally:
        tokenizer.backend_tokenizer.no_truncation()


@pytest.mark.parametrize("prefix_space", [False, True])
def test_a_worker_copy_of_the_tokenizer_gives_the_encoders_ids(prefix_space):
    """A server's HTTP worker tokenizes with a copy built from the tokenizer's JSON: the encoder's
    ids must not depend on which process computed them (with and without a prefix space)."""
    from nlgscore.bertscore.embedding import Encoder

    encoder = Encoder.load("minilm", num_layers=1)
    encoder.prefix_space = prefix_space
    texts = ["The cat sat.", "  padded  ", "", "Ünïcödé [SEP] 日本語", "a " * 700]
    front = FrontTokenizer.from_description(encoder.front_tokenizer())
    given = front.content_ids(texts)
    assert list(given) == texts
    for truncate in (True, False):
        assert encoder.tokenize(texts, truncate, given=given) == encoder.tokenize(texts, truncate)
    # Texts the worker did not send are tokenized here, in their places.
    assert encoder.tokenize(texts, given={texts[2]: given[texts[2]]}) == encoder.tokenize(texts)
    # A given id list is used as given (what makes the worker's ids reach the model).
    assert encoder.tokenize(["x"], given={"x": [7, 8]})[0] == [encoder.prefix + [7, 8] + encoder.suffix]


def _product_rows(fn):
    """fn() run under a dispatch mode that records the row count of every oneDNN linear product."""
    from torch.utils._python_dispatch import TorchDispatchMode

    rows = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if "_linear_pointwise" in str(func):
                rows.append(args[0].shape[0])
            return func(*args, **(kwargs or {}))

    with Record():
        out = fn()
    return out, rows


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("width", [40, 1536])  # 1536: a feed-forward down-projection's reduction length
def test_products_run_on_few_shapes_with_the_bits_of_a_large_product(onednn_switch, dtype, width):
    """oneDNN compiles a kernel per input shape and keeps its memory, so row counts are bucketed:
    a product runs on a multiple of MIN_ROWS rows, as a multiple of ROW_BUCKET and a shorter tail
    (at most 2048/128 + 7 shapes up to 2,048 rows). Every row gets the bits it gets inside one
    2,048-row product, on the tail as on the head, and a single short text costs its
    own rows, not a bucket of 128."""
    if not onednn_switch("1") or not gemm.onednn_available(str(dtype).replace("torch.", "")):
        pytest.skip("this torch build or CPU has no oneDNN linear in this dtype")
    generator = torch.Generator().manual_seed(3)
    w, b = torch.randn(24, width, generator=generator).to(dtype), torch.randn(24, generator=generator).to(dtype)
    x = torch.randn(2048, width, generator=generator).to(dtype)
    shapes = set()
    with torch.inference_mode():
        large, rows = _product_rows(lambda: gemm.linear(x, w, b, "gelu"))
        assert rows == [2048]
        for count in [*range(1, 300), 1000, 1500, 2047]:
            out, rows = _product_rows(lambda count=count: gemm.linear(x[:count], w, b, "gelu"))
            assert out.shape == (count, 24) and out.is_contiguous()
            assert torch.equal(out, large[:count]), count
            assert sum(rows) == gemm.bucketed_rows(count, x, w) >= count and sum(rows) - count < max(
                product_rows.MIN_ROWS, count // 16 + product_rows.MIN_ROWS
            )
            assert (
                len(rows) <= 2
                and all(r % product_rows.ROW_BUCKET == 0 for r in rows[:-1])
                and rows[-1] % product_rows.MIN_ROWS == 0
            )
            shapes.update(rows)
        _, rows = _product_rows(lambda: gemm.linear(x[:25].view(1, 25, width), w, b))
        assert rows == [32]  # one 25-token text: 32 rows, not 128
    assert shapes <= set(range(product_rows.MIN_ROWS, product_rows.ROW_BUCKET, product_rows.MIN_ROWS)) | set(
        range(product_rows.ROW_BUCKET, 2049, product_rows.ROW_BUCKET)
    )
    assert gemm.bucketed_rows(37, x, w) == 37  # gradients on: the F.linear path, nothing to pad


def test_direct_linear_calls_follow_the_measured_choice(monkeypatch):
    """The packed encoder and the LM head call gemm.linear directly: when MKL was chosen at model
    load, they must not take oneDNN anyway (bucketed rows show which path runs)."""
    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    gemm.onednn_available.cache_clear()
    if not gemm.onednn_available():
        pytest.skip("this torch build has no oneDNN linear")
    x, w = torch.zeros(1, 8), torch.zeros(4, 8)
    monkeypatch.setitem(gemm._CHOICE, "kernel", "mkl")
    with torch.inference_mode():
        assert gemm.bucketed_rows(37, x, w) == 37  # F.linear: no row bucket
    monkeypatch.setitem(gemm._CHOICE, "kernel", "onednn")
    with torch.inference_mode():
        assert gemm.bucketed_rows(37, x, w) == 48  # oneDNN: a multiple of MIN_ROWS


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_packed_weight_gives_the_plain_weights_bits_and_follows_its_changes(onednn_switch, monkeypatch, dtype):
    """oneDNN's blocked copy of a weight (made once, not at every product) gives the bits of the
    plain weight at every row count; a weight changed in place is packed again; past the cap a
    weight runs unpacked."""
    from nlgscore.backend import packed_weights

    if not onednn_switch("1") or not gemm.onednn_available(str(dtype).replace("torch.", "")):
        pytest.skip("this torch build or CPU has no oneDNN linear in this dtype")
    generator = torch.Generator().manual_seed(11)
    w, b = torch.randn(96, 64, generator=generator).to(dtype), torch.randn(96, generator=generator).to(dtype)
    x = torch.randn(300, 64, generator=generator).to(dtype)
    plain = torch.ops.mkldnn._linear_pointwise

    def check(w: torch.Tensor) -> None:
        with torch.inference_mode():
            for rows in (16, 32, 48, 112, 128, 256):  # one product each: compare with the plain weight's
                assert torch.equal(gemm.linear(x[:rows], w, b, "gelu"), plain(x[:rows], w, b, "gelu", [], "none")), rows

    check(w)
    assert packed_weights.packed(w) is not w and packed_weights.packed(w) is packed_weights.packed(w)
    held = packed_weights.packed_bytes()
    w.mul_(-0.5)  # in place: the copy must not serve the old values
    check(w)
    assert packed_weights.packed_bytes() == held  # packed again, in the old copy's place
    del w
    gc.collect()
    assert (
        packed_weights.packed_bytes() <= held - 96 * 64 * torch.tensor([], dtype=dtype).element_size()
    )  # dropped with its weight
    monkeypatch.setattr(packed_weights, "PACKED_BYTES_MAX", 0)
    other = torch.randn(8, 64, generator=generator).to(dtype)
    assert packed_weights.packed(other) is other
