"""Items, per-call run-time options and progress on real models.

BERTScore on the packaged MiniLM, Prism and BARTScore on the tiny golden checkpoints; nothing
is mocked (the batch counts are forward pre-hooks on the real models).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from nlgscore.core.base import Scorer
from nlgscore.core.inputs import Item
from nlgscore.core.result import Result

P = [
    "The cat sat on the mat.",
    "Prices rose sharply.",
    "The cat sat on the mat.",
    "A dog barked.",
    "Rain fell all day.",
]
R = [
    "A cat was sitting on the mat.",
    "Prices increased steeply.",
    "A cat was sitting on the mat.",
    "The dog was loud.",
    "It rained.",
]
S = ["Die Katze saß auf der Matte.", "Die Preise stiegen stark.", "Eine Katze.", "Ein Hund bellte.", "Es regnete."]


class Echo(Scorer):
    """A model-free metric that records what the hooks see (the template, not a metric, under test)."""

    name = "echo"
    needs = ("references", "sources")

    def __init__(self) -> None:
        self.seen = []

    def _score_items(self, items, state):
        self.seen.append(list(items))
        return {
            "n": np.array([len(i.prediction) + 10 * len(i.reference) + 100 * len(i.source) for i in items], dtype=float)
        }

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "n")

    def _signature_fields(self, call):
        return {}


def test_items_carry_every_needed_input_and_dedup_keys_on_all_of_them():
    scorer = Echo()
    result = scorer.compute(["a", "a", "a"], [["r", "rr"], "r", "r"], sources=["s", "s", "ss"])
    assert scorer.seen == [[Item("a", "r", "s"), Item("a", "rr", "s"), Item("a", "r", "ss")]]
    assert result.scores == [(111 + 121) / 2, 111.0, 211.0]
    with pytest.raises(ValueError, match=r"^sources are required for this echo call \(got sources=None\)"):
        scorer.compute(["a"], ["r"])
    with pytest.raises(ValueError, match=r"predictions=1, sources=2"):
        scorer.compute(["a"], ["r"], sources=["s", "t"])


def test_hooks_are_abstract():
    class Half(Scorer):
        def _finish(self, call, columns):
            return None

    with pytest.raises(TypeError, match="_score_items"):
        Half()


@pytest.mark.parametrize("metric", ["bertscore", "prism", "bart"])
def test_batch_size_per_call_is_exact_and_leaves_the_scorer_alone(metric, request, minilm_scorer):
    scorer = minilm_scorer if metric == "bertscore" else request.getfixturevalue(metric)
    before = scorer.runtime
    want = scorer.compute(P, R).scores
    order = list(range(len(P)))
    random.Random(1).shuffle(order)
    tiny = scorer.compute([P[i] for i in order], [R[i] for i in order], batch_size=1, max_tokens=16)
    np.testing.assert_allclose([tiny.scores[order.index(i)] for i in range(len(P))], want, atol=1e-5, rtol=0)
    assert scorer.runtime == before
    with pytest.raises(ValueError, match="max_tokens"):
        scorer.compute(P, R, max_tokens=0)
    with pytest.raises(TypeError, match="batch_size"):
        scorer.compute(P, R, batch_size="2")


def test_call_budget_reaches_the_batches(prism):
    """compute(max_tokens=) plans the call's batches (not the scorer's budget)."""
    calls = []
    model = prism._loaded.model
    handle = model.model.register_forward_pre_hook(lambda mod, args, kwargs: calls.append(1), with_kwargs=True)
    try:
        prism.compute(P, R)
        default = len(calls)
        calls.clear()
        prism.compute(P, R, max_tokens=40)
    finally:
        handle.remove()
    assert len(calls) > default


def test_bartscore_with_sources_only_scores_direction_src(bart):
    default = bart.compute(P, sources=S)
    explicit = bart.compute(P, sources=S, direction="src")
    assert default.scores == explicit.scores and default.signature["direction"] == "src"
    assert bart.compute(P, R).signature["direction"] == bart.direction  # references: the constructor's
    with pytest.raises(ValueError, match="sources are required"):
        bart.compute(P, R, direction="src")


@pytest.mark.parametrize("metric", ["bertscore", "prism", "bart"])
def test_progress_counts_input_items(metric, request, minilm_scorer, monkeypatch):
    import io

    class Terminal(io.StringIO):  # bars are drawn to a terminal only (nlgscore.backend.progress)
        def isatty(self) -> bool:
            return True

        def drain(self) -> str:
            text = self.getvalue()
            self.seek(0)
            self.truncate()
            return text

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr("nlgscore.backend.progress.DELAY_S", 0.0)  # drawn however short the call
    scorer = minilm_scorer if metric == "bertscore" else request.getfixturevalue(metric)
    n = 4 * len(P)  # 20 input items, 5 distinct pairs (4 of them distinct: P[0] == P[2])
    scorer.compute(P * 4, R * 4, progress=True, max_tokens=32)
    err = terminal.drain()
    assert f"{n}/{n}" in err and "/4 " not in err and "/5 " not in err
    scorer.compute(P, [[r, "Another reference."] for r in R], progress=True)  # 10 items, 5 lines
    err = terminal.drain()
    assert f"{len(P)}/{len(P)}" in err and "/10 " not in err
    scorer.compute(P, R)  # progress stays off for other calls
    assert terminal.drain() == ""


def test_matrix_is_equal_for_any_batch_size(minilm_scorer, bart):
    for scorer in (minilm_scorer, bart):
        np.testing.assert_allclose(
            scorer.matrix(P, R, batch_size=1, max_tokens=16), scorer.matrix(P, R), atol=1e-6, rtol=0
        )


def test_matrix_refuses_source_based_calls(bart):
    with pytest.raises(ValueError, match=r"compute\(predictions, sources=\.\.\.\)"):
        bart.matrix(P, R, direction="src")
