"""The evaluate module metrics/prism: offline load with checkpoint=, ref/src configs, doctests."""

import ast
import inspect
from pathlib import Path

import pytest

from nlgscore.seq2seq.prism import PrismScorer

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[2]
MODULE = str(REPO / "metrics" / "prism")
TINY = str(REPO / "tests" / "golden" / "tiny-prism")
CANDS = ["Hi world.", "This is a Test."]
REFS = ["Hello world.", "This is a test."]
SRCS = ["Bonjour le monde.", "C'est un test."]


@pytest.fixture(scope="module")
def scorer():
    return PrismScorer(TINY)


def test_ref_config_matches_the_scorer(scorer):
    metric = evaluate.load(MODULE, "ref", checkpoint=TINY)  # offline: HF_EVALUATE_OFFLINE=1 in conftest
    out = metric.compute(predictions=CANDS, references=REFS)
    expected = scorer.score(CANDS, refs=REFS)
    assert set(out) == {"scores", "mean", "signature"}
    # the same items through the module: the same bits (never a tolerance across batchings)
    assert out["scores"] == expected.scores and out["mean"] == expected.score
    assert out["signature"] == str(expected.signature)
    multi = metric.compute(predictions=CANDS, references=[[r] for r in REFS])
    assert multi["scores"] == out["scores"]


def test_src_config_and_temperature(scorer):
    metric = evaluate.load(MODULE, "src", checkpoint=TINY)
    out = metric.compute(predictions=CANDS, sources=SRCS, temperature=0.95)
    assert out["scores"] == PrismScorer(TINY, temperature=0.95).score(CANDS, srcs=SRCS).scores
    first = metric._scorer
    metric.compute(predictions=CANDS, sources=SRCS, temperature=0.95, batch_size=1)
    assert metric._scorer is first  # batch size does not change numbers
    assert "|mode:src|T:0.95|" in out["signature"]


def test_bad_config_and_missing_input():
    with pytest.raises(ValueError, match="config_name"):
        evaluate.load(MODULE, "both", checkpoint=TINY)
    metric = evaluate.load(MODULE, "src", checkpoint=TINY)
    with pytest.raises(ValueError):  # sources is a feature of the src config
        metric.compute(predictions=CANDS, references=REFS)


def test_module_contract():  # its examples run in tests/test_evaluate_modules.py
    metric = evaluate.load(MODULE, "ref", checkpoint=TINY)
    assert "kwargs" not in str(inspect.signature(metric._compute))
    # thin: the scoring is the package's; counted in statements, which formatting does not change
    tree = ast.parse((REPO / "metrics" / "prism" / "prism.py").read_text())
    assert sum(isinstance(node, ast.stmt) for node in ast.walk(tree)) < 40
    card = (REPO / "metrics" / "prism" / "README.md").read_text(encoding="utf-8")
    for section in (
        "## Metric description",
        "## How to use",
        "### Inputs",
        "## Output values",
        "### Values from popular papers",
        "## Limitations and bias",
        "## Citation",
    ):
        assert section in card, section


def test_mixed_string_and_list_references_score_as_the_core(scorer):
    """A plain-string reference among lists was cast to a list of its characters."""
    metric = evaluate.load(MODULE, "ref", checkpoint=TINY)
    refs = [[REFS[0], "Hello there."], REFS[1]]
    out = metric.compute(predictions=CANDS, references=refs)
    assert out["scores"] == scorer.score(CANDS, refs=[refs[0], [REFS[1]]]).scores
    assert out["scores"][1] == scorer.score(CANDS[1:], refs=REFS[1:]).scores[0]  # another batch, the same bits
    for prediction, reference in zip(CANDS, refs, strict=True):  # one example at a time, the same
        metric.add(prediction=prediction, reference=reference)
    assert metric.compute()["scores"] == pytest.approx(out["scores"], abs=1e-9)


def test_config_names_the_input_it_needs():
    """The ref config given sources= ended in 'NoneType' object is not subscriptable."""
    ref = evaluate.load(MODULE, "ref", checkpoint=TINY)
    with pytest.raises(ValueError, match=r"config 'ref'\) does not read sources=; pass references="):
        ref.compute(predictions=CANDS, sources=SRCS)
    with pytest.raises(ValueError, match=r"config 'ref'\) needs references="):
        ref.compute(predictions=CANDS)
    src = evaluate.load(MODULE, "src", checkpoint=TINY)
    with pytest.raises(ValueError, match=r"config 'src'\) needs sources="):
        src.compute(predictions=CANDS)
    with pytest.raises(ValueError, match=r"needs predictions="):
        src.compute(predictions=None, sources=SRCS)


def test_long_inputs_option(tmp_path):
    """long_inputs reaches the scorer, on a copy of the tiny model with 48 positions."""
    import warnings

    from long_texts import TAIL_A, TAIL_B, TARGET, short_prism

    metric = evaluate.load(MODULE, "src", checkpoint=str(short_prism(tmp_path / "p")))
    auto = metric.compute(predictions=[TARGET, TARGET], sources=[TAIL_A, TAIL_B])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the truncation warning
        cut = metric.compute(predictions=[TARGET, TARGET], sources=[TAIL_A, TAIL_B], long_inputs="truncate")
    assert auto["scores"][0] != auto["scores"][1] and cut["scores"][0] == cut["scores"][1]
    assert "|long_inputs:truncate|" in cut["signature"]


def test_document_context_reaches_the_scorer(scorer):
    metric = evaluate.load(MODULE, "ref", checkpoint=TINY)
    preds, refs, docs = ["The cat sat.", "It slept."], ["A cat sat.", "It was sleeping."], [7, 7]
    out = metric.compute(predictions=preds, references=refs, context=1, doc_ids=docs)
    expected = scorer.compute(preds, references=refs, context=1, doc_ids=docs)
    assert (
        out["scores"] == expected.scores
        and out["signature"] == str(expected.signature)
        and "|ctx:1|" in out["signature"]
    )
