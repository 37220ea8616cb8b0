"""The two switches that move a model metric's last bits are options of each scorer: ``kernel=``
(the CPU linear kernel, ``NLGSCORE_ONEDNN``) and ``forward=`` (the token forward,
``NLGSCORE_TOKEN_FORWARD``). Their default, ``"auto"``, is the environment variable's answer; the
signature records what ran; and two scorers of one process keep their own kernels and their own
bits, whatever was loaded after them.
"""

from __future__ import annotations

import pytest
from conftest import GOLDEN

from nlgscore.backend import gemm
from nlgscore.errors import ArgumentError

PREDS = ["The cat sat on the mat.", "at night, a dog barks", "it's cold today"]
REFS = ["A cat was sitting on the mat.", "dogs bark loudly at night", "the weather is cold today"]

needs_onednn = pytest.mark.skipif(not gemm.onednn_available(), reason="this torch build has no oneDNN linear")


def build(metric: str, **options):
    if metric == "bertscore":
        from nlgscore.bertscore import BERTScorer

        return BERTScorer(model_type="minilm", num_layers=4, device="cpu", **options)
    if metric == "prism":
        from nlgscore.seq2seq.prism import PrismScorer

        return PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", device="cpu", **options)
    from nlgscore.seq2seq.bartscore import BARTScorer

    return BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", **options)


@pytest.fixture
def unset(monkeypatch):
    """Neither variable set: "auto" is the CPU's rule and the padded forward."""
    monkeypatch.delenv("NLGSCORE_ONEDNN", raising=False)
    monkeypatch.delenv("NLGSCORE_TOKEN_FORWARD", raising=False)
    return monkeypatch


@needs_onednn
@pytest.mark.parametrize("metric", ["bertscore", "prism", "bartscore"])
def test_each_scorer_keeps_its_own_kernel_and_bits(metric, unset):
    onednn, mkl = build(metric, kernel="onednn"), build(metric, kernel="mkl")
    assert (onednn.kernel, mkl.kernel) == ("onednn", "mkl")
    assert (onednn.signature["kernel"], mkl.signature["kernel"]) == ("onednn", "mkl")
    first, second = onednn.compute(PREDS, REFS).scores, mkl.compute(PREDS, REFS).scores
    # "auto" is NLGSCORE_ONEDNN's answer: the same kernel, the same bits as the explicit option
    for value, want, kernel in (("1", first, "onednn"), ("0", second, "mkl")):
        unset.setenv("NLGSCORE_ONEDNN", value)
        auto = build(metric)
        assert auto.kernel == kernel and auto.compute(PREDS, REFS).scores == want
    unset.setenv("NLGSCORE_ONEDNN", "0")  # read at load only: the loaded scorers keep theirs
    assert onednn.compute(PREDS, REFS).scores == first and mkl.compute(PREDS, REFS).scores == second
    assert onednn.signature["kernel"] == "onednn"


@needs_onednn
def test_a_pickled_scorer_keeps_its_kernel(unset):
    """A scorer pickled into another process (datasets' num_proc, Ray) keeps its kernel= there:
    the kernel travels with the model, not in this process's memory only."""
    import pickle

    mkl = build("bertscore", kernel="mkl")
    want = mkl.compute(PREDS, REFS).scores
    copy = pickle.loads(pickle.dumps(mkl))
    assert copy.kernel == "mkl" and copy.signature["kernel"] == "mkl"
    assert copy.compute(PREDS, REFS).scores == want


@needs_onednn
def test_a_resumed_run_moves_every_loaded_model_to_the_recorded_kernel(unset):
    from nlgscore.corpus.outputs.resumable import kernel_in_use, same_kernel

    onednn, mkl = build("bertscore", kernel="onednn"), build("bertscore", kernel="mkl")
    want = onednn.compute(PREDS, REFS).scores
    assert (kernel_in_use(onednn), kernel_in_use(mkl)) == ("onednn", "mkl")
    with same_kernel("onednn"):
        assert mkl.kernel == "onednn" and mkl.compute(PREDS, REFS).scores == want
    assert mkl.kernel == "mkl" and mkl.signature["kernel"] == "mkl"  # back on its own after
    assert not any(type(m).__name__ == "OneDNNLinear" for m in mkl.encoder.model.modules())


@pytest.mark.parametrize("metric", ["bertscore", "prism", "bartscore"])
def test_forward_is_chosen_per_scorer_and_recorded(metric, unset):
    padded, tokens = build(metric), build(metric, forward="tokens")
    assert "forward" not in padded.signature and tokens.signature["forward"] == "tokens"
    unset.setenv("NLGSCORE_TOKEN_FORWARD", "1")
    auto, explicit = build(metric), build(metric, forward="padded")
    assert auto.signature["forward"] == "tokens" and "forward" not in explicit.signature
    assert auto.compute(PREDS, REFS).scores == tokens.compute(PREDS, REFS).scores
    assert explicit.compute(PREDS, REFS).scores == padded.compute(PREDS, REFS).scores


def test_tokens_where_the_model_has_no_token_forward_is_an_error(unset):
    with pytest.raises(ArgumentError, match=r"forward='tokens' is not available for .* with all_layers=True"):
        build("bertscore", all_layers=True, forward="tokens")
    unset.setenv("NLGSCORE_TOKEN_FORWARD", "1")  # "auto" keeps the padded forward where it cannot
    assert "forward" not in build("bertscore", all_layers=True).signature


@pytest.mark.parametrize("metric", ["bertscore", "prism", "bartscore"])
@pytest.mark.parametrize("option,value", [("kernel", "fast"), ("forward", "packed")])
def test_a_bad_choice_names_the_option(metric, option, value):
    with pytest.raises(ArgumentError, match=f"{option} must be one of"):
        build(metric, **{option: value})


def test_a_bad_variable_is_an_error_at_load(unset):
    unset.setenv("NLGSCORE_TOKEN_FORWARD", "sometimes")
    with pytest.raises(ArgumentError, match="NLGSCORE_TOKEN_FORWARD='sometimes'"):
        build("bartscore")
    assert build("bartscore", forward="padded").signature.get("forward") is None  # the option does not read it
