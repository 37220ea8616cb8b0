"""The evaluate module metrics/bartscore: offline load with a checkpoint, inputs, caching, doctests."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "golden" / "tiny-bart")
HYPS = ["On Monday the weather in Almaty was sunny.", "The cat sat on the mat."]
REFS = ["It was sunny in Almaty on Monday.", "A cat was sitting on the mat."]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(REPO / "metrics" / "bartscore"), "bart-large-cnn", checkpoint=TINY)


@pytest.fixture(scope="module")
def scorer():
    from nlgscore.seq2seq.bartscore import BARTScorer

    return BARTScorer(checkpoint=TINY, device="cpu")


def test_references_sources_and_multi(metric, scorer):
    out = metric.compute(predictions=HYPS, references=REFS, device="cpu")
    assert set(out) == {"scores", "mean", "signature"}
    want = scorer.compute(HYPS, REFS)
    assert out["scores"] == pytest.approx(list(want.scores), abs=1e-6)
    assert out["mean"] == pytest.approx(want.score, abs=1e-6) and out["signature"] == str(want.signature)
    src = metric.compute(predictions=HYPS, sources=REFS, device="cpu")
    assert src["scores"] == pytest.approx(scorer.score(REFS, HYPS), abs=1e-6) and "|direction:src|" in src["signature"]
    multi = metric.compute(
        predictions=HYPS, references=[[REFS[0], REFS[1]], [REFS[1]]], agg="max", direction="recall", device="cpu"
    )
    assert multi["scores"][1] == pytest.approx(scorer.score(HYPS[1:], REFS[1:])[0], abs=1e-6)
    assert multi["scores"][0] == pytest.approx(max(scorer.score(HYPS[:1] * 2, REFS)), abs=1e-6)
    with pytest.raises(ValueError, match="sources"):
        metric.compute(predictions=HYPS, references=REFS, direction="src", device="cpu")


def test_the_input_a_direction_does_not_read_is_refused(metric):
    """direction="src" ignored references= without a word (and a reference direction ignored sources=)."""
    both = dict(predictions=HYPS, references=REFS, sources=REFS, device="cpu")
    with pytest.raises(ValueError, match=r"direction 'src'\) does not read references=; pass sources="):
        metric.compute(direction="src", **both)
    for direction in ("f", "precision", None):
        with pytest.raises(ValueError, match=r"does not read sources=; pass references="):
            metric.compute(direction=direction, **both)
    assert len(metric.compute(predictions=HYPS, sources=REFS, direction="src", device="cpu")["scores"]) == 2


def test_scorer_cached_and_rebuilt(metric):
    metric.compute(predictions=HYPS, references=REFS, device="cpu")
    first = metric._scorer
    metric.compute(predictions=HYPS, references=REFS, device="cpu", batch_size=1, prompt="Such as")
    assert metric._scorer is first  # batch size and prompt do not need a new model
    metric.compute(predictions=HYPS, references=REFS, device="cpu", max_length=512)
    assert metric._scorer is not first


def test_config_name_is_the_variant():
    other = evaluate.load(str(REPO / "metrics" / "bartscore"), "bart-large", checkpoint=TINY)
    assert "|variant:bart-large|" in other.compute(predictions=HYPS[:1], references=REFS[:1], device="cpu")["signature"]
    with pytest.raises(ValueError, match="variant"):
        evaluate.load(str(REPO / "metrics" / "bartscore"), "bart-huge")


def test_module_contract(metric):  # its examples run in tests/test_evaluate_modules.py
    assert "kwargs" not in str(inspect.signature(metric._compute))
    # thin: the scoring is the package's; counted in statements, which formatting does not change
    tree = ast.parse((REPO / "metrics" / "bartscore" / "bartscore.py").read_text())
    assert sum(isinstance(node, ast.stmt) for node in ast.walk(tree)) < 40


def test_mixed_string_and_list_references_score_as_the_core(metric, scorer):
    """A plain-string reference among lists was cast to a list of its characters."""
    refs = [[REFS[0], REFS[1]], REFS[1]]
    out = metric.compute(predictions=HYPS, references=refs, device="cpu")
    assert out["scores"] == pytest.approx(list(scorer.compute(HYPS, [refs[0], [REFS[1]]]).scores), abs=1e-6)
    assert out["scores"][1] == pytest.approx(list(scorer.compute(HYPS[1:], REFS[1:]).scores)[0], abs=1e-6)


def test_missing_input_is_named(metric):
    """predictions=None ended in 'NoneType' object is not subscriptable."""
    with pytest.raises(ValueError, match=r"needs predictions="):
        metric.compute(predictions=None, references=REFS)
    with pytest.raises(ValueError, match=r"needs references= .* or sources="):
        metric.compute(predictions=HYPS)


def test_long_inputs_option(metric):
    """long_inputs reaches the scorer: auto reads past max_length, truncate does not, error names the item."""
    import warnings

    from long_texts import LIMIT, LONG, SHORT, TAIL_A, TAIL_B, TARGET

    from nlgscore.errors import ArgumentError

    args = dict(predictions=[TARGET, TARGET], references=[TAIL_A, TAIL_B], direction="precision", max_length=LIMIT)
    auto = metric.compute(**args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the truncation warning
        cut = metric.compute(long_inputs="truncate", **args)
    assert auto["scores"][0] != auto["scores"][1] and cut["scores"][0] == cut["scores"][1]
    assert "|long_inputs:auto|" in auto["signature"] and "|long_inputs:truncate|" in cut["signature"]
    with pytest.raises(ArgumentError, match=r"references\[1\]"):
        metric.compute(predictions=[SHORT, SHORT], references=[SHORT, LONG], max_length=LIMIT, long_inputs="error")


def test_document_context_reaches_the_scorer(metric, scorer):
    docs = ["d"] * len(HYPS)
    out = metric.compute(predictions=HYPS, references=REFS, context=1, doc_ids=docs, device="cpu")
    want = scorer.compute(HYPS, REFS, direction="f", context=1, doc_ids=docs)
    assert (
        out["scores"] == list(want.scores) and out["signature"] == str(want.signature) and "|ctx:1|" in out["signature"]
    )
