"""BARTScorer options: directions, prompts, aggregation, variants, para weights, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import nlgscore
from nlgscore.core.signature import Signature
from nlgscore.seq2seq.bartscore import BARTScorer, prompt_list

TINY = str(Path(__file__).parents[1] / "golden" / "tiny-bart")
HYPS = ["The cat sat on the mat.", "Prices rose sharply.", ""]
REFS = ["A cat was sitting on the mat.", "In the final quarter, prices increased steeply.", "Nothing was said."]


@pytest.fixture(scope="module")
def scorer():
    torch.set_num_threads(1)
    return nlgscore.BARTScorer(checkpoint=TINY, device="cpu")


def test_directions_are_the_reference_compositions(scorer):
    p = np.array(scorer.score(REFS, HYPS))
    r = np.array(scorer.score(HYPS, REFS))
    f = scorer.compute(HYPS, REFS)
    np.testing.assert_allclose(f.precision, p, atol=1e-12)
    np.testing.assert_allclose(f.recall, r, atol=1e-12)
    np.testing.assert_allclose(f.scores, (p + r) / 2, atol=1e-12)
    assert f.score == pytest.approx(float(np.mean((p + r) / 2)))
    h = scorer.compute(HYPS, REFS, direction="harmonic")
    np.testing.assert_allclose(h.scores, p * r / (p + r), atol=1e-12)  # the authors' harm_f
    np.testing.assert_allclose(scorer.compute(HYPS, REFS, direction="precision").scores, p, atol=1e-12)
    np.testing.assert_allclose(scorer.compute(HYPS, REFS, direction="recall").scores, r, atol=1e-12)
    src = scorer.compute(HYPS, sources=REFS, direction="src")
    np.testing.assert_allclose(src.scores, p, atol=1e-12)
    assert "precision" not in src.columns() and len(src) == 3
    assert all(v < 0 for v in f.scores)


def test_ragged_references_mean_and_max(scorer):
    refs = [[REFS[0], REFS[1]], [REFS[1]], [REFS[2], REFS[0], REFS[1]]]
    flat = [(i, r) for i, rs in enumerate(refs) for r in rs]
    per = np.array(scorer.score([HYPS[i] for i, _ in flat], [r for _, r in flat]))
    per_p = np.array(scorer.score([r for _, r in flat], [HYPS[i] for i, _ in flat]))
    owner = np.array([i for i, _ in flat])
    for agg, fn in (("mean", np.mean), ("max", np.max)):
        got = scorer.compute(HYPS, refs, direction="recall", agg=agg).scores
        np.testing.assert_allclose(got, [fn(per[owner == i]) for i in range(3)], atol=1e-12)
        f = scorer.compute(HYPS, refs, direction="f", agg=agg)
        # f is formed per (prediction, reference) pair, then aggregated over the references.
        np.testing.assert_allclose(f.scores, [fn(((per + per_p) / 2)[owner == i]) for i in range(3)], atol=1e-12)
        np.testing.assert_allclose(f.precision, [fn(per_p[owner == i]) for i in range(3)], atol=1e-12)


def test_prompts_follow_the_authors_placement(scorer):
    enc = scorer.compute(HYPS[:2], REFS[:2], direction="f", prompt="Such as")
    p = np.array(scorer.score([r + " Such as," for r in REFS[:2]], HYPS[:2]))
    r = np.array(scorer.score([h + " Such as," for h in HYPS[:2]], REFS[:2]))
    np.testing.assert_allclose(enc.scores, (p + r) / 2, atol=1e-12)
    dec = scorer.compute(HYPS[:2], REFS[:2], direction="precision", prompt="In other words", prompt_side="decoder")
    np.testing.assert_allclose(
        dec.scores, scorer.score(REFS[:2], ["In other words, " + h for h in HYPS[:2]]), atol=1e-12
    )
    both = scorer.compute(HYPS[:2], REFS[:2], direction="precision", prompt=["Such as", "Namely"])
    single = [scorer.compute(HYPS[:2], REFS[:2], direction="precision", prompt=q).scores for q in ("Such as", "Namely")]
    np.testing.assert_allclose(both.scores, np.mean(single, axis=0), atol=1e-12)
    assert Signature.parse(str(both.signature))["prompt"].startswith("list2-")
    assert enc.signature["prompt"] == "Such_as" and enc.signature["side"] == "encoder"


def test_prompt_sets_are_the_papers():
    ref_hyp, src_hyp = prompt_list("ref_hyp"), prompt_list("src_hyp")
    assert (len(ref_hyp), len(set(ref_hyp)), len(src_hyp), len(set(src_hyp))) == (34, 34, 70, 70)
    assert {"Such as", "i.e.", "To rephrase it", "That is to say"} <= set(ref_hyp)
    assert {"In summary", "in other words"}.isdisjoint(ref_hyp)  # seeds are not in the files
    assert {"To sum up", "In a word", "In short", "Not to put too fine a point on it"} <= set(src_hyp)


def test_prompt_set_ensemble(scorer):
    result = scorer.compute(HYPS[:1], sources=REFS[:1], direction="src", prompt="src_hyp", prompt_side="decoder")
    prompts = prompt_list("src_hyp")
    want = np.mean(scorer.score(REFS[:1] * len(prompts), [f"{q}, {HYPS[0]}" for q in prompts]))
    assert result.scores[0] == pytest.approx(want, abs=1e-12)
    assert result.signature["prompt"] == "set-src_hyp"


def test_signature_and_registry(scorer):
    sig = scorer.signature
    assert sig.metric == "bartscore" and sig["variant"] == "bart-large-cnn" and sig["model"] == "tiny-bart"
    assert (
        sig["direction"] == "f"
        and sig["max_length"] == "1024"
        and sig["dtype"] == "float32"
        and sig["multiref"] == "mean"
    )
    assert scorer.compute(HYPS, REFS, agg="max").signature["multiref"] == "max"
    assert sig["checkpoint"] == sig["model"] and sig["agg"] == sig["multiref"]  # transitional old keys still read
    loaded = nlgscore.load("bartscore:bart-large:precision", checkpoint=TINY, device="cpu")
    assert loaded.direction == "precision" and loaded.signature["variant"] == "bart-large"
    assert loaded.compute(HYPS, REFS).scores == pytest.approx(scorer.score(REFS, HYPS), abs=1e-12)


def test_empty_inputs(scorer):
    assert len(scorer.compute([], [])) == 0
    assert np.isnan(scorer.compute([], []).score)
    assert scorer.score([], []) == []
    assert np.isfinite(scorer.compute([""], [""]).scores[0])


def test_bad_input(scorer):
    with pytest.raises(ValueError, match="sources"):
        scorer.compute(HYPS, REFS, direction="src")
    with pytest.raises(ValueError, match="references"):
        scorer.compute(HYPS)
    with pytest.raises(ValueError, match="direction"):
        scorer.compute(HYPS, REFS, direction="backwards")
    with pytest.raises(ValueError, match="agg"):
        scorer.compute(HYPS, REFS, agg="min")
    with pytest.raises(ValueError, match="prompt_side"):
        scorer.compute(HYPS, REFS, prompt="Such as", prompt_side="middle")
    with pytest.raises(TypeError, match="prompt"):
        scorer.compute(HYPS, REFS, prompt=[])
    with pytest.raises(TypeError, match=r"predictions\[1\]"):
        scorer.compute(["a", None], ["b", "c"])
    with pytest.raises(ValueError, match="references"):
        scorer.compute(HYPS, REFS[:2])
    with pytest.raises(ValueError, match="srcs and tgts"):
        scorer.score(["a"], ["b", "c"])
    with pytest.raises(ValueError, match="variant"):
        BARTScorer(checkpoint=TINY, variant="bart-huge")
    with pytest.raises(ValueError, match="max_length"):
        BARTScorer(checkpoint=TINY, max_length=4096, device="cpu")


def test_not_an_encoder_decoder(tmp_path):
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10).save_pretrained(tmp_path)
    with pytest.raises(TypeError, match="checkpoint"):
        BARTScorer(checkpoint=str(tmp_path), device="cpu")


@pytest.fixture(scope="module")
def para_file(tmp_path_factory):
    """A stand-in for the authors' bart.pth: tiny-bart's state dict with perturbed weights."""
    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(TINY)
    gen = torch.Generator().manual_seed(0)
    state = {
        k: v + 0.05 * torch.randn(v.shape, generator=gen) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
    }
    folder = tmp_path_factory.mktemp("para")
    torch.save(state, folder / "bart.pth")
    model.load_state_dict(state)
    model.save_pretrained(folder / "merged")
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json"):
        (folder / "merged" / name).write_bytes((Path(TINY) / name).read_bytes())
    return folder, state


def test_para_weights(scorer, para_file):
    folder, _ = para_file
    para = BARTScorer(
        checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(folder / "bart.pth"), device="cpu"
    )
    merged = BARTScorer(checkpoint=str(folder / "merged"), device="cpu")
    assert para.score(REFS, HYPS) == merged.score(REFS, HYPS)  # the same weights and inputs: the same bits
    assert para.score(REFS, HYPS) != pytest.approx(scorer.score(REFS, HYPS), abs=1e-3)
    assert para.signature["para"].startswith("file-bart.pth-") and para.signature["variant"] == "bart-large-cnn-para"


def test_para_weights_errors(para_file):
    folder, state = para_file
    with pytest.raises(ValueError, match="para_weights"):
        BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", device="cpu")  # no Hub repo configured
    with pytest.raises(FileNotFoundError, match="para_weights"):
        BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(folder / "nope.pth"), device="cpu")
    broken = dict(state)
    broken.pop("model.encoder.layers.0.fc1.weight")
    broken["model.extra.weight"] = torch.zeros(2)
    torch.save(broken, folder / "broken.pth")
    with pytest.raises(ValueError, match=r"fc1.weight.*model.extra.weight"):
        BARTScorer(
            checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(folder / "broken.pth"), device="cpu"
        )
    tied = {k: v for k, v in state.items() if k != "lm_head.weight"}  # tied copies may be left out
    torch.save(tied, folder / "tied.pth")
    BARTScorer(checkpoint=TINY, variant="bart-large-cnn-para", para_weights=str(folder / "tied.pth"), device="cpu")
