"""nlgscore.seq2seq.likelihood against a plain one-pair-at-a-time forward on the tiny BART fixture."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgscore.backend.batching import padded_length
from nlgscore.backend.models import resolve
from nlgscore.seq2seq.likelihood import check_seq2seq, load_seq2seq, target_logprobs

TINY = Path(__file__).parents[1] / "golden" / "tiny-bart"
TEXTS = [
    "The weather was warm and sunny in Almaty on Monday.",
    "It was sunny.",
    "A cat was sitting on the mat.",
    "The cat sat on the mat.",
    "",
    "?!...",
    "Prices rose sharply in the last quarter, said the minister of finance on Tuesday morning.",
]


@pytest.fixture(scope="module")
def loaded():
    torch.set_num_threads(1)  # the fixture is tiny; threads only add scheduling noise on shared CPUs
    return load_seq2seq(resolve(str(TINY)), torch.device("cpu"), torch.float32)


@pytest.fixture(scope="module")
def pairs(loaded):
    _, tok = loaded
    ids = tok(TEXTS)["input_ids"]
    srcs, tgts = [], []
    # Every text against every text: each source recurs 8 times, some pairs are identical.
    for s in ids:
        for t in ids:
            srcs.append(s)
            tgts.append(t)
    srcs += [ids[0], ids[0]]
    tgts += [ids[1], ids[1]]
    return srcs, tgts


def plain(model, src, tgt, temperature=1.0):
    """One pair, no padding, no batching: the definition."""
    with torch.no_grad():
        dec = torch.tensor([[2] + list(tgt[:-1])])
        logits = model(input_ids=torch.tensor([src]), decoder_input_ids=dec).logits[0] / temperature
        logp = torch.log_softmax(logits, -1)  # float32, as the reference scorers normalise
        return logp[torch.arange(len(tgt)), torch.tensor(tgt)].double().numpy()


@pytest.fixture(scope="module")
def expected(loaded, pairs):
    model, _ = loaded
    return [plain(model, s, t) for s, t in zip(*pairs)]


def assert_close(got, want, scale=1.0):
    """Per-pair mean log-prob (the score) within 2e-6, single tokens within 5e-6.

    Both sides are float32 computations: tiny-bart's random weights give log-probs around -10,
    where one float32 ulp is ~1e-6, and padding a pair in a batch moves its logits by an ulp or two
    (matmul blocking). 1e-6 is below that floor; trained BART models (log-probs around -1 to -3)
    sit four times further from it. ``scale`` widens both for a temperature below 1."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == np.float64 and g.shape == w.shape
        np.testing.assert_allclose(g, w, atol=5e-6 * scale, rtol=0)
        assert abs(g.mean() - w.mean()) < 2e-6 * scale


@pytest.mark.parametrize("max_tokens,max_batch_size", [(100_000, 1), (100_000, None), (60, None), (1, None)])
def test_matches_plain_forward(loaded, pairs, expected, max_tokens, max_batch_size):
    model, _ = loaded
    got = target_logprobs(
        model, *pairs, pad_id=1, decoder_start_id=2, max_tokens=max_tokens, max_batch_size=max_batch_size
    )
    assert_close(got, expected)


def test_shuffled_order(loaded, pairs, expected):
    model, _ = loaded
    order = list(range(len(pairs[0])))
    random.Random(3).shuffle(order)
    got = target_logprobs(
        model, [pairs[0][i] for i in order], [pairs[1][i] for i in order], pad_id=1, decoder_start_id=2, max_tokens=200
    )
    assert_close(got, [expected[i] for i in order])


def test_temperature(loaded, pairs):
    model, _ = loaded
    srcs, tgts = pairs[0][:20], pairs[1][:20]
    got = target_logprobs(model, srcs, tgts, pad_id=1, decoder_start_id=2, temperature=0.7)
    assert_close(got, [plain(model, s, t, 0.7) for s, t in zip(srcs, tgts)], scale=1 / 0.7)
    assert not np.allclose(got[0], plain(model, srcs[0], tgts[0]))


def encoded_rows(model, pairs, **options):
    """Run target_logprobs on ``pairs`` (budget of ~2 pairs a batch, so the 8 pairs of a source
    span several batches); return the results and the number of sources the encoder saw."""
    rows = []
    handle = model.get_encoder().register_forward_pre_hook(
        lambda mod, args, kwargs: rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        got = target_logprobs(model, *pairs, pad_id=1, decoder_start_id=2, max_tokens=60, **options)
    finally:
        handle.remove()
    return got, sum(rows)


def test_encoder_runs_once_per_source(loaded, pairs, expected):
    """A recurring source is encoded once even when its pairs span several batches."""
    got, encoded = encoded_rows(loaded[0], pairs)
    assert_close(got, expected)
    assert encoded == len(TEXTS)


def test_duplicate_pairs_computed_once(loaded):
    model, tok = loaded
    ids = tok(["A cat.", "A dog."])["input_ids"]
    calls = []
    # The inner encoder-decoder (model.model) runs on every path, also where the LM head is
    # applied by target_logprobs itself to real tokens only.
    handle = model.model.register_forward_pre_hook(
        lambda mod, args, kwargs: calls.append(kwargs["decoder_input_ids"].shape[0]), with_kwargs=True
    )
    try:
        out = target_logprobs(model, [ids[0]] * 5, [ids[1]] * 5, pad_id=1, decoder_start_id=2)
    finally:
        handle.remove()
    assert calls == [1]
    assert all(np.array_equal(o, out[0]) for o in out)
    out[0][0] = 0.0  # results are independent arrays
    assert out[1][0] != 0.0


class _OOMOnce:
    """Wraps the real model and raises a CUDA-style OOM on the first batch of more than one pair
    (an out-of-memory error cannot be produced on CPU, hence the mock)."""

    def __init__(self, model):
        self.model, self.config, self.raised = model, model.config, False

    def get_encoder(self):
        return self.model.get_encoder()

    def parameters(self):
        return self.model.parameters()

    def __call__(self, **kwargs):
        if not self.raised and kwargs["decoder_input_ids"].shape[0] > 1:
            self.raised = True
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return self.model(**kwargs)


def test_out_of_memory_backs_off(loaded, pairs, expected):
    model, _ = loaded
    wrapped = _OOMOnce(model)
    got = target_logprobs(wrapped, *pairs, pad_id=1, decoder_start_id=2, max_tokens=4096)
    assert wrapped.raised
    assert_close(got, expected)


def test_errors(loaded):
    model, tok = loaded
    ids = tok(["A cat."])["input_ids"][0]
    with pytest.raises(ValueError, match=r"targets\[1\]"):
        target_logprobs(model, [ids, ids], [ids, []], pad_id=1, decoder_start_id=2)
    with pytest.raises(ValueError, match=r"sources\[0\]"):
        target_logprobs(model, [[]], [ids], pad_id=1, decoder_start_id=2)
    with pytest.raises(ValueError, match="same length"):
        target_logprobs(model, [ids], [ids, ids], pad_id=1, decoder_start_id=2)
    with pytest.raises(ValueError, match="temperature"):
        target_logprobs(model, [ids], [ids], pad_id=1, decoder_start_id=2, temperature=0)
    assert target_logprobs(model, [], [], pad_id=1, decoder_start_id=2) == []


def test_not_encoder_decoder(tmp_path):
    from transformers import GPT2Config

    with pytest.raises(TypeError, match="encoder"):
        check_seq2seq(torch.nn.Linear(2, 2))
    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10).save_pretrained(tmp_path)
    with pytest.raises(TypeError, match="not an encoder"):
        load_seq2seq(resolve(str(tmp_path)), torch.device("cpu"), torch.float32)


def test_half_precision_logits_normalised_in_float32(loaded):
    """bf16 weights (CPU can run them for a check): log-probs still come out float64 and close."""
    model, tok = loaded
    ids = tok(["A cat sat.", "The cat sat on the mat."])["input_ids"]
    ref = target_logprobs(model, [ids[0]], [ids[1]], pad_id=1, decoder_start_id=2)[0]
    half = load_seq2seq(resolve(str(TINY)), torch.device("cpu"), torch.bfloat16)[0]
    got = target_logprobs(half, [ids[0]], [ids[1]], pad_id=1, decoder_start_id=2)[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref, atol=0.1)


def test_encoder_cache_bounded(loaded, pairs, expected, monkeypatch):
    """With no room to cache, recurring sources are re-encoded and results are unchanged."""
    import nlgscore.seq2seq.likelihood as likelihood

    monkeypatch.setattr(likelihood, "CACHE_BUDGETS", 0)
    got, encoded = encoded_rows(loaded[0], pairs)
    assert_close(got, expected)
    assert encoded > len(TEXTS)


def test_cross_attention_projected_once_per_source(loaded, pairs, expected):
    """Rows sharing a source share its cross-attention keys/values: the projection sees each
    distinct source of a batch once (one batch here), and the scores stay the plain forward's."""
    model, _ = loaded
    rows = []
    k_proj = model.model.decoder.layers[0].encoder_attn.k_proj

    def spy(x):  # the rows the projection really multiplies (a hook would see the module's input)
        rows.append(x.shape[0])
        return type(k_proj).forward(k_proj, x)

    k_proj.forward = spy
    try:
        got = target_logprobs(model, *pairs, pad_id=1, decoder_start_id=2, max_tokens=100_000)
        assert k_proj.forward is spy  # the sharing put back what it found
    finally:
        del k_proj.forward
    assert_close(got, expected)
    # one row per distinct source of each forward, not per pair; a batch runs one forward per
    # (source, target) padded length (batch invariance, nlgscore.backend.batching.padded_length)
    groups = {}
    for source, target in zip(*pairs):
        groups.setdefault((padded_length(len(source)), padded_length(len(target))), set()).add(tuple(source))
    assert sorted(rows) == sorted(len(sources) for sources in groups.values()) and sum(rows) < len(pairs[0])


def test_cross_attention_sharing_for_marian_layout():
    """Prism's checkpoints load as Marian: the same sharing applies (its golden tests check the scores)."""
    from nlgscore.seq2seq.likelihood import _Engine
    from nlgscore.seq2seq.prism_loading import load_prism

    loaded_prism = load_prism(str(Path(__file__).parents[1] / "golden" / "tiny-prism"), device="cpu")
    engine = _Engine(loaded_prism.model, 1, 2, 1.0, {}, 1000)
    assert engine.cross_share_ok
