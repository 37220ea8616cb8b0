"""The evaluate module metrics/bertscore: offline load, both input formats, caching, doctests."""

from __future__ import annotations

import doctest
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(REPO / "metrics" / "bertscore"))  # offline: HF_EVALUATE_OFFLINE=1 in conftest


def test_single_and_multi_reference_inputs(metric, minilm_scorer):
    preds = ["The cat sat on the mat.", "it is freezing today"]
    single = metric.compute(predictions=preds, references=["A cat was sitting on the mat.", "the weather is cold today"], model_type="minilm", num_layers=4)
    assert set(single) == {"precision", "recall", "f1", "hashcode"}
    expected = minilm_scorer.score(preds, ["A cat was sitting on the mat.", "the weather is cold today"])
    np.testing.assert_allclose(single["f1"], expected.f1, atol=1e-6)
    assert single["hashcode"] == str(expected.signature)
    multi = metric.compute(predictions=preds, references=[["A cat was sitting on the mat.", "x"], ["the weather is cold today"]], model_type="minilm", num_layers=4)
    assert multi["f1"][1] == pytest.approx(single["f1"][1], abs=1e-6) and multi["f1"][0] >= single["f1"][0] - 1e-6


def test_scorer_cached_and_rebuilt_on_number_changing_args(metric):
    args = dict(predictions=["a b"], references=["a c"], model_type="minilm", num_layers=4)
    metric.compute(**args)
    first = metric._scorer
    metric.compute(**args, batch_size=3)
    assert metric._scorer is first  # batch size does not change numbers
    metric.compute(**{**args, "num_layers": 3})
    assert metric._scorer is not first


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
    assert one["hashcode"] != two["hashcode"] and not np.allclose(one["f1"], two["f1"], atol=1e-4)


def test_module_contract_and_doctests(metric, monkeypatch):
    assert "kwargs" not in str(inspect.signature(metric._compute))
    assert len(metric._info().features) == 2
    assert len((REPO / "metrics" / "bertscore" / "bertscore.py").read_text().splitlines()) < 100
    monkeypatch.chdir(REPO)
    results = doctest.testmod(sys.modules[type(metric).__module__], raise_on_error=False, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 1 and results.failed == 0
