"""The evaluate module metrics/bertscore: offline load, both input formats, caching, doctests."""

from __future__ import annotations

import ast
import doctest
import inspect
from pathlib import Path

import numpy as np
import pytest

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(REPO / "metrics" / "bertscore"))  # offline: HF_EVALUATE_OFFLINE=1 in conftest


def test_single_and_multi_reference_inputs(metric, minilm_scorer):
    preds = ["The cat sat on the mat.", "it is freezing today"]
    single = metric.compute(
        predictions=preds,
        references=["A cat was sitting on the mat.", "the weather is cold today"],
        model_type="minilm",
        num_layers=4,
    )
    assert set(single) == {"precision", "recall", "f1", "hashcode", "signature"}
    expected = minilm_scorer.score(preds, ["A cat was sitting on the mat.", "the weather is cold today"])
    np.testing.assert_allclose(single["f1"], expected.f1, atol=1e-6)
    assert single["signature"] == str(expected.signature)
    multi = metric.compute(
        predictions=preds,
        references=[["A cat was sitting on the mat.", "x"], ["the weather is cold today"]],
        model_type="minilm",
        num_layers=4,
    )
    assert multi["f1"][1] == pytest.approx(single["f1"][1], abs=1e-6) and multi["f1"][0] >= single["f1"][0] - 1e-6


def test_scorer_cached_and_rebuilt_on_number_changing_args(metric):
    args = dict(predictions=["a b"], references=["a c"], model_type="minilm", num_layers=4)
    metric.compute(**args)
    first = metric._scorer
    metric.compute(**args, batch_size=3)
    assert metric._scorer is first  # batch size does not change numbers
    metric.compute(**{**args, "num_layers": 3})
    assert metric._scorer is not first


def test_long_inputs_reach_the_scorer(metric):
    """long_inputs and window_stride are keywords of the module, in the cache key and the signature."""
    long_ref = " ".join(
        f"item {i} of a long list of the things the committee discussed." for i in range(60)
    )  # > 512 tokens
    common = dict(
        predictions=["the committee discussed item 59"], references=[long_ref], model_type="minilm", num_layers=4
    )
    auto = metric.compute(**common)
    cut = metric.compute(**common, long_inputs="truncate")
    strided = metric.compute(**common, window_stride=100)
    assert "long_inputs:auto|window_stride:255" in auto["signature"] and "long_inputs:truncate" in cut["signature"]
    assert "window_stride:100" in strided["signature"] and auto["f1"] != cut["f1"]


def test_no_stale_idf(metric):
    """The Hub wrapper reused the idf of its first call; here idf follows each call's inputs."""
    preds = ["the cat sat on the mat", "a dog barked loudly"]
    refs_a = ["a cat was on the mat", "the dog was barking"]
    refs_b = ["the cat is sitting on a mat", "dogs bark loudly at night"]
    common = dict(predictions=preds, model_type="minilm", num_layers=4)
    metric.compute(references=refs_a, idf=True, **common)
    again = metric.compute(references=refs_b, idf=True, **common)
    fresh = evaluate.load(str(REPO / "metrics" / "bertscore")).compute(references=refs_b, idf=True, **common)
    np.testing.assert_allclose(again["f1"], fresh["f1"], atol=1e-6)
    one = metric.compute(references=refs_a, idf_sents=refs_a, **common)
    two = metric.compute(references=refs_a, idf_sents=refs_b, **common)
    assert one["signature"] != two["signature"] and not np.allclose(one["f1"], two["f1"], atol=1e-4)


def test_module_contract(metric):  # its examples run in tests/test_evaluate_modules.py
    assert "kwargs" not in str(inspect.signature(metric._compute))
    assert len(metric._info().features) == 2
    # thin: the scoring is the package's; counted in statements, which formatting does not change
    tree = ast.parse((REPO / "metrics" / "bertscore" / "bertscore.py").read_text())
    assert sum(isinstance(node, ast.stmt) for node in ast.walk(tree)) < 40


def test_mixed_string_and_list_references_score_as_the_core(metric, minilm_scorer):
    """A plain-string reference among lists was cast to a list of its characters."""
    preds = ["The cat sat on the mat.", "Prices rose sharply."]
    refs = [["A cat was sitting on the mat.", "x"], "Prices increased steeply."]
    out = metric.compute(predictions=preds, references=refs, model_type="minilm", num_layers=4)
    expected = minilm_scorer.score(preds, [refs[0], [refs[1]]])
    np.testing.assert_allclose(out["f1"], expected.f1, atol=1e-6)
    alone = minilm_scorer.score(preds[1:], refs[1:])
    assert out["f1"][1] == pytest.approx(float(alone.f1[0]), abs=1e-6) and out["f1"][1] > 0.6
    # A later batch of plain strings, after a batch chose the lists form, is not split either.
    metric.add_batch(predictions=preds[:1], references=refs[:1])
    metric.add_batch(predictions=preds[1:], references=refs[1:])
    batched = metric.compute(model_type="minilm", num_layers=4)
    np.testing.assert_allclose(batched["f1"], expected.f1, atol=1e-6)
    for prediction, reference in zip(preds, refs, strict=True):  # one example at a time, the same
        metric.add(prediction=prediction, reference=reference)
    np.testing.assert_allclose(metric.compute(model_type="minilm", num_layers=4)["f1"], expected.f1, atol=1e-6)


def test_shared_input_checks_doctests():
    from nlgscore import evaluate_modules

    results = doctest.testmod(evaluate_modules, raise_on_error=False)
    assert results.attempted >= 4 and results.failed == 0


def test_missing_input_is_named(metric):
    """None inputs ended in 'NoneType' object is not subscriptable."""
    with pytest.raises(ValueError, match=r"needs references="):
        metric.compute(predictions=["a"], references=None, model_type="minilm")
    with pytest.raises(ValueError, match=r"needs predictions="):
        metric.compute(predictions=None, references=["a"], model_type="minilm")


def test_hub_module_arguments_are_accepted(metric, minilm_scorer):
    """Every argument of the Hub bertscore module's _compute is accepted (drop-in)."""
    hub_arguments = (
        "lang",
        "model_type",
        "num_layers",
        "verbose",
        "idf",
        "device",
        "batch_size",
        "nthreads",
        "all_layers",
        "rescale_with_baseline",
        "baseline_path",
        "use_fast_tokenizer",
    )
    assert set(hub_arguments) <= set(inspect.signature(metric._compute).parameters)
    out = metric.compute(
        predictions=["a cat sat"],
        references=["the cat sat"],
        lang="en",
        model_type="minilm",
        num_layers=4,
        verbose=False,
        idf=False,
        device="cpu",
        batch_size=64,
        nthreads=4,
        all_layers=False,
        rescale_with_baseline=False,
        baseline_path=None,
        use_fast_tokenizer=False,
    )
    assert out["f1"][0] == pytest.approx(float(minilm_scorer.score(["a cat sat"], ["the cat sat"]).f1[0]), abs=1e-6)


def test_document_context_reaches_the_scorer(metric, minilm_scorer):
    preds, refs, docs = (
        ["The cat sat.", "It slept.", "Rain fell."],
        ["A cat sat.", "It was sleeping.", "It rained."],
        ["d", "d", "e"],
    )
    out = metric.compute(predictions=preds, references=refs, model_type="minilm", num_layers=4, context=1, doc_ids=docs)
    expected = minilm_scorer.compute(preds, refs, context=1, doc_ids=docs)
    assert (
        list(out["f1"]) == list(expected.f1)
        and out["signature"] == str(expected.signature)
        and "|ctx:1|" in out["signature"]
    )
    with pytest.raises(ValueError, match="doc_ids has 2 items but there are 3 predictions"):
        metric.compute(
            predictions=preds, references=refs, model_type="minilm", num_layers=4, context=1, doc_ids=docs[:2]
        )


@pytest.mark.parametrize(
    "settings, custom",
    [
        (dict(num_layers=4), False),
        (dict(), False),  # the model's default layer, as bert_score's model2layers would give it
        (dict(num_layers=3, idf=True), False),
        (dict(num_layers=4, idf_sents=["a cat", "a dog"]), False),  # idf_sents alone switches idf on
        (dict(num_layers=4, lang="en", rescale_with_baseline=True), False),
        (dict(num_layers=4, rescale_with_baseline=True, baseline_path="BASELINE"), True),
        (dict(num_layers=4, use_fast_tokenizer=True), False),
    ],
)
def test_hashcode_is_bert_scores_own(metric, settings, custom, tmp_path):
    """hashcode is what bert_score's get_hash writes for the same settings (the Hub module returns
    that); the full nlgscore signature is beside it."""
    utils = pytest.importorskip("bert_score.utils")
    if settings.get("baseline_path"):
        settings["baseline_path"] = str(tmp_path / "custom.tsv")
        (tmp_path / "custom.tsv").write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.5,0.5\n" for i in range(7)))
    out = metric.compute(predictions=["a cat sat"], references=["the cat sat"], model_type="minilm", **settings)
    signature = dict(field.split(":", 1) for field in out["signature"].split("|")[1:])
    assert signature["model"] == "all-MiniLM-L6-v2"
    expected = utils.get_hash(
        model="all-MiniLM-L6-v2",
        num_layers=int(signature["L"]),
        idf=signature["idf"] != "no",
        rescale_with_baseline=bool(settings.get("rescale_with_baseline")),
        use_custom_baseline=custom,
        use_fast_tokenizer=bool(settings.get("use_fast_tokenizer")),
    )
    assert out["hashcode"] == expected
    assert out["signature"].startswith("nlgscore:bertscore|") and out["hashcode"] != out["signature"]
