"""The likelihood engine's token forward (encoder and teacher-forced decoder on packed tokens,
attention per sequence): the padded engine's log-probabilities, the same bits in any batch on
both CPU kernels, BARTScore's and Prism's golden values with NLGSCORE_TOKEN_FORWARD=1, and the
signature field. On CPU the attention is the per-sequence reference of the CUDA varlen kernel, so
these tests hold the packing, the positions, the layer recipes, the shared cross-attention keys and
the per-pair split that the CUDA path shares."""

import random
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from nlgscore.backend.models import resolve
from nlgscore.backend.packed_attention import ENV_SWITCH, varlen_attention
from nlgscore.seq2seq.likelihood import load_seq2seq, target_logprobs, uses_token_forward
from nlgscore.seq2seq.token_forward import Seq2SeqTokenForward, supports

GOLDEN = Path(__file__).parents[1] / "golden"
# Per-token natural-log probabilities of float32 models, whose sums run in another order than the
# padded engine's (attention per sequence rather than over a padded, masked row; causal by SDPA's
# flag rather than a mask; one packed product rather than one per padded group). Measured at most
# 1.9e-6 on tiny-bart and tiny-prism and 9.5e-7 on the random models below, the same under MKL and
# oneDNN, 1 and 2 threads: one or two float32 ulps of log-probabilities of 8-12 (an ulp there is
# 9.5e-7), the rounding of the final log-softmax; the layers' reordered sums stay below it. 1e-5 is
# ten such ulps, for either CPU kernel; the golden values hold to 1.4e-6 (BARTScore) and 5.4e-7
# (Prism's averaged H) with the token forward.
TOLERANCE = 1e-5


def _golden(name):
    model, _ = load_seq2seq(resolve(str(GOLDEN / name)), torch.device("cpu"), torch.float32)
    return model


def _random(kind):
    """A small random model of an architecture with no golden checkpoint here (weights at 0.1, so
    the logits spread over several units and a wrong layer shows)."""
    import transformers

    classes = {
        "mbart": ("MBartConfig", "MBartForConditionalGeneration"),
        "marian": ("MarianConfig", "MarianMTModel"),
        "pegasus": ("PegasusConfig", "PegasusForConditionalGeneration"),
    }
    config_class, model_class = (getattr(transformers, name) for name in classes[kind])
    torch.manual_seed(5)
    config = config_class(
        vocab_size=120, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
        pad_token_id=1, decoder_start_token_id=2, scale_embedding=True, init_std=0.1,
    )  # fmt: skip
    model = model_class(config).eval()
    with torch.no_grad():
        model.final_logits_bias.normal_()  # so that the bias is part of what is compared
    return model


def _pairs(vocab, seed=0, n=14):
    """Pairs of 1-40 source and 1-30 target tokens over 4 sources (so sources recur), one target
    holding the padding id (M2M100 counts its positions past it, as fairseq does)."""
    rng = random.Random(seed)
    sources = [tuple(rng.randrange(4, vocab) for _ in range(rng.randint(1, 40))) for _ in range(4)]
    srcs, tgts = [], []
    for i in range(n):
        srcs.append(sources[i % 4])
        tgt = tuple(rng.randrange(4, vocab) for _ in range(rng.randint(1, 30)))
        tgts.append(tgt + (1, 7) if i == 5 else tgt)
    return srcs, tgts


def _logprobs(model, srcs, tgts, tokens, **options):
    return target_logprobs(model, srcs, tgts, pad_id=1, decoder_start_id=2, token_forward=tokens, **options)


@pytest.mark.parametrize("name", ["tiny-bart", "tiny-prism", "mbart", "marian", "pegasus"])
def test_the_token_forward_gives_the_padded_engines_logprobs(kernel, name):
    model = _golden(name) if name.startswith("tiny") else _random(name)
    assert supports(model) and uses_token_forward(model, True) and not uses_token_forward(model, False)
    srcs, tgts = _pairs(model.config.vocab_size)
    padded = _logprobs(model, srcs, tgts, False)
    packed = _logprobs(model, srcs, tgts, True)
    assert [len(x) for x in packed] == [len(t) for t in tgts]
    assert all(x.dtype == np.float64 for x in packed)
    worst = max(float(np.abs(a - b).max()) for a, b in zip(padded, packed))
    assert worst < TOLERANCE, worst
    # a wrong position, layer norm or key would move the numbers by far more than the tolerance
    assert max(float(np.abs(a).max()) for a in packed) > 100 * TOLERANCE


@pytest.mark.parametrize("name", ["tiny-bart", "tiny-prism"])
def test_a_pairs_bits_do_not_depend_on_its_batch(kernel, name):
    model = _golden(name)
    srcs, tgts = _pairs(model.config.vocab_size, seed=1)
    together = _logprobs(model, srcs, tgts, True)
    for i, (src, tgt) in enumerate(zip(srcs, tgts)):
        assert np.array_equal(_logprobs(model, [src], [tgt], True)[0], together[i]), i
    flipped = _logprobs(model, srcs[::-1], tgts[::-1], True)[::-1]
    small = _logprobs(model, srcs, tgts, True, max_tokens=60)  # other batches, other cache hits
    assert all(np.array_equal(a, b) for a, b in zip(flipped, together))
    assert all(np.array_equal(a, b) for a, b in zip(small, together))


@pytest.fixture
def calls(monkeypatch):
    """What the token forward is asked to run: the sources each encoder pass gets, the targets each
    decoder pass gets, and the rows of the first decoder layer's cross-attention key projection."""
    seen = {"encoded": [], "decoded": [], "key_rows": []}
    encode, decode, project = Seq2SeqTokenForward.encode, Seq2SeqTokenForward.decode, Seq2SeqTokenForward._project

    def counted_encode(self, sources):
        seen["encoded"].append(len(sources))
        return encode(self, sources)

    def counted_decode(self, inputs, states, source_of):
        seen["decoded"].append(len(inputs))
        return decode(self, inputs, states, source_of)

    def counted_project(self, module, x):
        if module is self.decoder.layers[0].encoder_attn.k_proj:
            seen["key_rows"].append(x.shape[0])
        return project(self, module, x)

    monkeypatch.setattr(Seq2SeqTokenForward, "encode", counted_encode)
    monkeypatch.setattr(Seq2SeqTokenForward, "decode", counted_decode)
    monkeypatch.setattr(Seq2SeqTokenForward, "_project", counted_project)
    return seen


def test_the_engines_bookkeeping_holds_with_the_token_forward(calls, monkeypatch):
    """Identical pairs once, a recurring source encoded once across batches while the cache has
    room (again when it has none), its cross-attention keys projected once per batch."""
    import nlgscore.seq2seq.likelihood as likelihood

    model = _golden("tiny-bart")
    srcs, tgts = _pairs(model.config.vocab_size, seed=3, n=16)  # 4 sources, 4 pairs each
    reference = _logprobs(model, srcs, tgts, False)
    got = _logprobs(model, srcs + srcs[:3], tgts + tgts[:3], True, max_tokens=80)  # 3 pairs again
    assert all(np.array_equal(a, b) for a, b in zip(got[16:], got[:3]))
    assert all(np.abs(a - b).max() < TOLERANCE for a, b in zip(got, reference))
    assert len(calls["decoded"]) > 1 and sum(calls["decoded"]) == 16  # several batches; duplicates once
    assert sum(calls["encoded"]) == 4  # each source once, though its pairs span batches
    calls["encoded"].clear()
    monkeypatch.setattr(likelihood, "CACHE_BUDGETS", 0)
    again = _logprobs(model, srcs, tgts, True, max_tokens=80)
    assert sum(calls["encoded"]) > 4 and all(np.array_equal(a, b) for a, b in zip(again, got))
    calls["key_rows"].clear()
    _logprobs(model, srcs, tgts, True, max_tokens=100_000)  # one batch: each source's keys once
    assert calls["key_rows"] == [sum(len(s) for s in set(srcs))]


def test_cross_attention_with_shared_keys_and_causal_self_attention():
    """Per-sequence attention against each sequence's own masked, padded attention: keys read in
    place from a shared source (key_starts) and a causal mask."""
    generator = torch.Generator().manual_seed(2)
    q_lengths, heads, size = [5, 1, 11], 2, 8
    q = torch.randn(sum(q_lengths), heads, size, generator=generator)
    k, v = (torch.randn(9, heads, size, generator=generator) for _ in range(2))  # two sources: rows 0-3, 4-8
    key_lengths, key_starts = [4, 5, 4], [0, 4, 0]
    out = varlen_attention(q, k, v, q_lengths, key_lengths=key_lengths, key_starts=key_starts, scale=0.3)
    causal = varlen_attention(q, q, q, q_lengths, causal=True)
    start = 0
    for n, m, first in zip(q_lengths, key_lengths, key_starts):
        query = q[start : start + n].transpose(0, 1)[None]
        key, value = (t[first : first + m].transpose(0, 1)[None] for t in (k, v))
        expected = F.scaled_dot_product_attention(query, key, value, scale=0.3)[0].transpose(0, 1)
        assert (out[start : start + n] - expected).abs().max() < TOLERANCE
        mask = torch.ones(n, n).tril().bool()  # transformers' causal mask as explicit bits
        expected = F.scaled_dot_product_attention(query, query, query, attn_mask=mask)[0].transpose(0, 1)
        assert (causal[start : start + n] - expected).abs().max() < TOLERANCE
        start += n


def test_an_unsupported_model_keeps_the_padded_forward():
    class Wrapper(torch.nn.Module):  # the engine's own fallback for models without the layout
        def __init__(self, inner):
            super().__init__()
            self.inner, self.config = inner, inner.config

        def get_encoder(self):
            return self.inner.get_encoder()

        def forward(self, **inputs):
            return self.inner(**inputs)

    model = _golden("tiny-bart")
    wrapped = Wrapper(model)
    assert not supports(wrapped) and not uses_token_forward(wrapped, True)
    srcs, tgts = _pairs(model.config.vocab_size, n=4)
    a, b = _logprobs(wrapped, srcs, tgts, True), _logprobs(model, srcs, tgts, False)
    assert all(np.abs(x - y).max() < TOLERANCE for x, y in zip(a, b))


def test_bartscore_golden_values_and_signature_with_the_token_forward(monkeypatch):
    from test_bartscore import CASES, TINY, _check_golden_cases

    from nlgscore.seq2seq.bartscore import BARTScorer

    monkeypatch.delenv(ENV_SWITCH, raising=False)
    plain = BARTScorer(checkpoint=TINY, device="cpu", long_inputs="truncate")
    monkeypatch.setenv(ENV_SWITCH, "1")
    scorer = BARTScorer(checkpoint=TINY, device="cpu", long_inputs="truncate")
    assert scorer.token_forward and not plain.token_forward
    _check_golden_cases(scorer, None, True)  # every golden field within 1e-5
    hyps, refs = [c["hyp"] for c in CASES[:5]], [c["ref"] for c in CASES[:5]]
    together = scorer.compute(hyps, refs)
    assert together.signature["forward"] == "tokens" and "forward" not in plain.compute(hyps, refs).signature
    alone = [scorer.compute([h], [r]).scores[0] for h, r in zip(hyps, refs)]
    flipped = scorer.compute(hyps[::-1], refs[::-1]).scores[::-1]
    assert alone == list(together.scores) == list(flipped)  # the same bits in any batch and order


def test_prism_golden_values_and_signature_with_the_token_forward(monkeypatch):
    from test_prism import CASES, TINY, _check_golden

    from nlgscore.seq2seq.prism import PrismScorer

    monkeypatch.delenv(ENV_SWITCH, raising=False)
    plain = PrismScorer(TINY, lang="en")
    monkeypatch.setenv(ENV_SWITCH, "1")
    scorer = PrismScorer(TINY, lang="en")
    _check_golden(scorer, None, None, True)  # every golden field within 1e-5 (G: its sum's bound)
    cands, refs = [c["cand"] for c in CASES[:5]], [c["ref"] for c in CASES[:5]]
    together = scorer.score(cands, refs=refs)
    assert together.signature["forward"] == "tokens" and "forward" not in plain.score(cands, refs=refs).signature
    alone = [scorer.score([c], refs=[r]).segment[0] for c, r in zip(cands, refs)]
    flipped = scorer.score(cands[::-1], refs=refs[::-1]).segment[::-1]
    assert alone == list(together.segment) == list(flipped)
