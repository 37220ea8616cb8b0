"""The one metric API: every scorer's compute() and Result, on real models.

BERTScore on the packaged MiniLM, Prism and BARTScore on the tiny golden checkpoints. Nothing is
mocked except a CUDA out-of-memory error, which cannot happen on a CPU.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from nlgscore.backend import gemm
from nlgscore.core.base import Scorer, aggregate
from nlgscore.core.result import Result
from nlgscore.core.signature import Signature

GOLDEN = Path(__file__).parent / "golden"
P = ["The cat sat on the mat.", "Prices rose sharply.", "The cat sat on the mat."]
R = ["A cat was sitting on the mat.", "Prices increased steeply.", "A cat was sitting on the mat."]
MULTI = [["A cat was sitting on the mat.", "On the mat sat a cat."], "Prices increased steeply.", ["x"]]


def _check_contract(result: Result, n: int) -> None:
    assert len(result.scores) == n and all(isinstance(v, float) and math.isfinite(v) for v in result.scores)
    assert isinstance(result.score, float) and abs(result.score - float(np.mean(result.scores))) < 1e-9
    assert isinstance(result.system, dict) and result.system[result.primary] == pytest.approx(result.score, abs=1e-9)
    assert str(result.signature) and result.signature["multiref"] in ("mean", "max")
    columns = result.columns()
    assert columns[result.primary] == result.scores and all(len(v) == n for v in columns.values())
    as_dict = result.to_dict()
    assert as_dict["score"] == result.score and as_dict["signature"] == str(result.signature)
    assert as_dict["scores"] == result.scores  # the same key for every metric
    json.dumps(as_dict)
    frame = result.to_pandas()
    assert list(frame.columns) == list(columns) and len(frame) == n


def test_bertscore_contract_and_alias(kernel):
    minilm_scorer = kernel.scorer("minilm")
    result = minilm_scorer.compute(P, references=MULTI)
    _check_contract(result, 3)
    assert result.scores == result.f1.tolist() and result.primary == "f1"
    assert minilm_scorer.score(P, MULTI).scores == result.scores  # bert_score's historical call
    # multi-reference is the max over the references, each scored in another call: the same bits,
    # an item's score depending on the item alone, never a tolerance across batchings
    assert result.scores[0] == max(minilm_scorer.score(P[:1], [MULTI[0][k]]).scores[0] for k in range(2))


def test_prism_contract_and_alias(kernel):
    prism = kernel.scorer("prism")
    ref = prism.compute(P, references=MULTI)
    _check_contract(ref, 3)
    assert ref.scores == ref.segment and prism.score(P, refs=MULTI).scores == ref.scores
    assert ref.H_ref_given_cand == ref.columns()["H_ref_given_cand"]
    src = prism.compute(P, sources=R)
    assert src.scores == prism.score(P, srcs=R).scores and "multiref" not in src.signature


def test_bartscore_contract_and_alias(kernel):
    bart = kernel.scorer("bart")
    result = bart.compute(P, references=R)
    _check_contract(result, 3)
    p, r = bart.score(R, P), bart.score(P, R)  # the authors' score(srcs, tgts): lists of floats
    assert isinstance(p, list) and all(isinstance(v, float) for v in p)
    np.testing.assert_allclose(result.scores, (np.array(p) + np.array(r)) / 2, atol=1e-12)
    np.testing.assert_allclose(bart.compute(P, sources=R, direction="src").scores, p, atol=1e-12)


def test_one_signature_vocabulary(minilm_scorer, prism, bart):
    keys = [set(s.signature) for s in (minilm_scorer, prism, bart)]
    for shared in ("model", "revision", "dtype"):
        assert all(shared in k for k in keys), shared
    for old in ("rev", "maxlen", "mref", "agg", "checkpoint"):
        assert not any(old in k for k in keys), old  # written with one spelling only
    assert "max_length" in keys[0] and "max_length" in keys[2]


def test_empty_input_gives_nan_score_only_when_empty(minilm_scorer, prism, bart):
    for result in (
        minilm_scorer.compute([], references=[]),
        prism.compute([], references=[]),
        bart.compute([], references=[]),
    ):
        assert result.scores == [] and math.isnan(result.score)


def test_all_layers_scores_are_the_chosen_layer():
    from nlgscore.bertscore import BERTScorer

    scorer = BERTScorer(model_type="minilm", num_layers=3, all_layers=True)
    result = scorer.compute(P[:2], references=R[:2])
    assert result.f1.shape == (7, 2) and result.scores == result.f1[3].tolist()
    assert len(result.system["f1"]) == 7
    one = BERTScorer(model_type="minilm", num_layers=3).compute(P[:2], references=R[:2])
    np.testing.assert_allclose(result.scores, one.scores, atol=1e-5)


def test_bad_budgets_are_rejected_everywhere(bart):
    from nlgscore.bertscore import BERTScorer
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    for make in (
        lambda **kw: BERTScorer(model_type="minilm", num_layers=2, **kw),
        lambda **kw: PrismScorer(str(GOLDEN / "tiny-prism"), **kw),
        lambda **kw: BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), **kw),
    ):
        for name in ("batch_size", "max_tokens"):
            with pytest.raises(ValueError, match=name):
                make(**{name: 0})
            with pytest.raises(TypeError, match=name):
                make(**{name: "2"})
    with pytest.raises(TypeError, match="batch_size"):
        bart.score(["a"], ["b"], batch_size="2")
    with pytest.raises(ValueError, match="max_tokens"):
        bart.max_tokens = 0
    bart.max_tokens = None  # back to the device default
    assert bart.max_tokens == 4096


def test_matching_batches_back_off_on_out_of_memory(minilm_scorer, monkeypatch):
    """A CUDA OOM in a matching batch halves the matching budget and retries (OOM simulated)."""
    import nlgscore.bertscore.pairs as pairs

    want = minilm_scorer.compute(P, references=R).scores
    real = pairs.greedy_match
    calls = []

    def flaky(*args):
        calls.append(args[0].shape[0])
        if len(calls) == 1:
            raise RuntimeError("CUDA out of memory (simulated)")
        return real(*args)

    monkeypatch.setattr(pairs, "greedy_match", flaky)
    monkeypatch.setattr(pairs, "MATCH_BUDGET", 1 << 16)
    got = minilm_scorer.compute(P, references=R).scores
    assert len(calls) >= 2 and got == pytest.approx(want, abs=1e-9)  # retried, same numbers


def test_aggregation_rules_and_toy_metric():
    values = np.array([[1.0, 2.0], [3.0, 0.0], [5.0, 5.0]])
    np.testing.assert_allclose(aggregate(values, [0, 0, 1], 2, "max"), [[3.0, 2.0], [5.0, 5.0]])
    np.testing.assert_allclose(aggregate(values, [0, 0, 1], 2, "mean"), [[2.0, 1.0], [5.0, 5.0]])

    class Length(Scorer):
        name = "length"

        def _score_items(self, items, state):
            return {"ratio": np.array([len(i.prediction) / max(len(i.reference), 1) for i in items], dtype=float)}

        def _finish(self, call, columns):
            return Result(self.make_signature(call), columns, "ratio")

        def _signature_fields(self, call):
            return {}

    result = Length().compute(["ab", "abcd"], references=[["a", "abcd"], "ab"])
    assert result.scores == [1.25, 2.0] and result.signature["multiref"] == "mean"


def test_kernel_choice_is_recorded(monkeypatch):
    import torch

    monkeypatch.delenv(gemm.ENV_SWITCH, raising=False)
    gemm.onednn_available.cache_clear()
    shapes = [(384, 384), (1536, 384)]
    kernel = gemm.choose_kernel(shapes)
    choice = gemm.kernel_choice()
    assert kernel == choice["kernel"] in ("onednn", "mkl") and choice["cpu"]
    if gemm.onednn_available():
        assert choice["reason"].startswith("rule:") and kernel == gemm.kernel_rule()[0]
    monkeypatch.setenv(gemm.ENV_SWITCH, "0")
    gemm.onednn_available.cache_clear()
    assert gemm.choose_kernel(shapes) == "mkl" and "forced" in gemm.kernel_choice()["reason"]
    layer = torch.nn.Linear(4, 3)
    assert gemm.use_onednn_linears(torch.nn.Sequential(layer)) == 0
    monkeypatch.delenv(gemm.ENV_SWITCH)
    gemm.onednn_available.cache_clear()
    gemm.choose_kernel(shapes)


def test_signature_old_keys_read_but_not_written():
    sig = Signature("toy", revision="abc", max_length=3, _versions=False)
    assert sig["rev"] == "abc" and sig["maxlen"] == "3" and "|rev:" not in str(sig)
