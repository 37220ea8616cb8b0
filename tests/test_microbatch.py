"""The micro-batcher: concurrent small calls merged into one compute, each caller its own slice.

Real scorers throughout (the embedded MiniLM); the one toy metric below is a real Scorer whose
items fail on a chosen text, to make a merged compute fail the way a model error would.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import numpy as np
import pytest

from nlgscore.core.base import Scorer
from nlgscore.core.result import Result
from nlgscore.errors import ArgumentError, ArgumentTypeError
from nlgscore.registry import load
from nlgscore.scheduler.microbatch import MicroBatcher, QueueFullError

PREDS = [f"The {w} sat on the mat number {i}." for i, w in enumerate(["cat", "dog", "bird", "fox", "cow", "owl"] * 4)]
REFS = [f"A {w} is on the mat." for w in ["cat", "dog", "bird"] * 8]


@pytest.fixture(scope="module")
def scorer():
    return load("bertscore:minilm", num_layers=2)


def test_coroutines_are_merged_and_get_compute_scores(scorer):
    batcher = MicroBatcher(scorer, max_batch=8, max_wait_ms=50)

    async def main():
        return await asyncio.gather(*(batcher.acompute([p], [r]) for p, r in zip(PREDS, REFS)))

    results = asyncio.run(main())
    batcher.close()
    offline = scorer.compute(PREDS, REFS)
    got = [r.scores[0] for r in results]
    np.testing.assert_allclose(got, offline.scores, rtol=0, atol=1e-6)  # float rounding of another batch shape
    assert all(len(r) == 1 and str(r.signature) == str(offline.signature) for r in results)
    assert batcher.batches <= len(PREDS) // 8 + 1  # 24 calls in (about) 3 merged computes, not 24
    np.testing.assert_allclose([r.precision[0] for r in results], offline.precision, atol=1e-6)


def test_threads_submit_and_ragged_references(scorer):
    refs = [[r, "Something else entirely."] if i % 2 else r for i, r in enumerate(REFS)]
    out = [None] * len(PREDS)
    with MicroBatcher(scorer, max_batch=64, max_wait_ms=100) as batcher:

        def work(i):
            out[i] = batcher.compute([PREDS[i]], [refs[i]]).scores[0]

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(PREDS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    np.testing.assert_allclose(out, scorer.compute(PREDS, refs).scores, atol=1e-6)
    assert batcher.batches < len(PREDS)


def test_a_call_with_several_predictions_keeps_its_order(scorer):
    with MicroBatcher(scorer, max_wait_ms=30) as batcher:
        futures = [batcher.submit(PREDS[k : k + 5], REFS[k : k + 5]) for k in range(0, 20, 5)]
        got = [s for f in futures for s in f.result().scores]
    np.testing.assert_allclose(got, scorer.compute(PREDS[:20], REFS[:20]).scores, atol=1e-6)


def test_a_malformed_call_fails_alone_at_submit(scorer):
    with MicroBatcher(scorer, max_wait_ms=50) as batcher:
        good = batcher.submit(["It is cold."], ["It is cold today."])
        with pytest.raises(ArgumentTypeError, match=r"predictions\[0\] must be a str"):
            batcher.submit([3], ["x"])
        with pytest.raises(ArgumentError, match="references"):
            batcher.submit(["a", "b"], ["only one"])
        with pytest.raises(ArgumentError, match="references are required"):
            batcher.submit(["a"])
        assert good.result().scores[0] > 0.5


class Picky(Scorer):
    """Word overlap that fails inside scoring on the text 'boom' (as a model error would), and
    holds the worker on the text 'hold' until ``gate`` is set (a test fills the queue meanwhile)."""

    name = "picky"

    def __init__(self, **options):
        super().__init__(**options)
        self.gate = threading.Event()

    def _score_items(self, items, state):
        if any(i.prediction == "hold" for i in items):
            assert self.gate.wait(30)
        if any(i.prediction == "boom" for i in items):
            raise RuntimeError("the model cannot take 'boom'")
        words = [(set(i.prediction.split()), set(i.reference.split())) for i in items]
        return {"jaccard": np.array([len(p & r) / len(p | r) for p, r in words])}

    def _finish(self, call, columns):
        return Result(self.make_signature(call), columns, "jaccard")

    def _signature_fields(self, call):
        return {}


def test_a_call_failing_inside_compute_fails_alone():
    picky = Picky()
    batcher = MicroBatcher(picky, max_batch=16, max_wait_ms=100)
    held = batcher.submit(["hold"], ["hold"])  # the worker is busy while the next calls queue
    while batcher.queued:  # taken by the worker
        time.sleep(0.01)
    futures = [batcher.submit([p], ["a b"]) for p in ("a b", "boom", "a", "b c")]
    picky.gate.set()
    batcher.close()
    assert [f.result().scores[0] for f in (held, futures[0], futures[2], futures[3])] == [1.0, 1.0, 0.5, 1 / 3]
    with pytest.raises(RuntimeError, match="boom"):
        futures[1].result()
    assert batcher.batches == 2  # the held call, then one merged attempt, then the calls apart


def test_per_call_idf_is_never_merged():
    idf = load("bertscore:minilm", num_layers=2, idf=True)
    with MicroBatcher(idf, max_wait_ms=50) as batcher:
        futures = [batcher.submit(PREDS[k : k + 3], REFS[k : k + 3]) for k in range(0, 9, 3)]
        got = [f.result().scores for f in futures]
    assert got == [idf.compute(PREDS[k : k + 3], REFS[k : k + 3]).scores for k in range(0, 9, 3)]  # each call's own idf
    assert batcher.batches == 3


def test_queue_full_and_cancelled_calls():
    picky = Picky()
    batcher = MicroBatcher(picky, max_batch=100, max_wait_ms=60_000, max_queue=3)
    batcher.submit(["hold"], ["hold"])  # an idle worker takes a call at once: this one keeps it busy
    while batcher.queued:
        time.sleep(0.01)
    first = batcher.submit(["a", "b"], ["a", "a"])
    dropped = batcher.submit(["a"], ["a"])
    with pytest.raises(QueueFullError, match="max_queue=3"):
        batcher.submit(["c"], ["c"])
    assert batcher.queued == 3 and dropped.cancel()
    picky.gate.set()
    batcher.close()  # closing scores what is queued without waiting out max_wait_ms
    assert first.result(timeout=10).scores == [1.0, 0.0] and dropped.cancelled()
    with pytest.raises(RuntimeError, match="closed"):
        batcher.submit(["a"], ["a"])


@pytest.mark.parametrize("cached", [True, False])
def test_grpo_load_encodes_each_reference_once(cached):
    """B prompts x G rollouts, the rollouts of a prompt split over two batches: with the
    reference cache, B*G + B texts go through the encoder; without it, a reference is re-encoded."""
    scorer = load("bertscore:minilm", num_layers=2, cache_references=cached)
    encoded = []
    embed = scorer.encoder.embed
    scorer.encoder.embed = lambda batch: (encoded.append(len(batch)), embed(batch))[1]  # counts texts, runs the encoder
    B, G = 4, 8
    prompts = [
        (f"reference sentence {b} about the weather", [f"rollout {g} of prompt {b} says it rains" for g in range(G)])
        for b in range(B)
    ]

    async def main(batcher):
        for ref, rollouts in prompts:  # one GRPO step per prompt group, its rollouts concurrent
            await asyncio.gather(*(batcher.acompute([r], [ref]) for r in rollouts))

    with MicroBatcher(scorer, max_batch=G // 2, max_wait_ms=50) as batcher:
        asyncio.run(main(batcher))
    assert (sum(encoded) <= B * G + B) == cached, sum(encoded)


def test_split_result_keeps_layers_and_plot_inputs():
    scorer = load("bertscore:minilm", num_layers=2, all_layers=True)
    whole = scorer.compute(PREDS[:3], REFS[:3])
    a, b = whole.split([1, 2])
    assert a.precision.shape == (whole.precision.shape[0], 1) and b.scores == whole.scores[1:]
    assert b._source[1] == PREDS[1:3] and type(b) is type(whole)


def test_scorer_acompute(scorer):
    async def main():
        return await asyncio.gather(*(scorer.acompute([p], [r]) for p, r in zip(PREDS[:6], REFS[:6])))

    got = [r.scores[0] for r in asyncio.run(main())]
    np.testing.assert_allclose(got, scorer.compute(PREDS[:6], REFS[:6]).scores, atol=1e-6)
    copy = pickle.loads(pickle.dumps(scorer))  # the batcher's thread stays behind; the copy makes its own
    assert "_batcher" in scorer.__dict__ and "_batcher" not in copy.__dict__
    assert asyncio.run(copy.acompute(PREDS[:1], REFS[:1])).scores == pytest.approx(got[:1], abs=1e-6)


def test_bad_settings_are_named():
    with pytest.raises(ArgumentError, match="max_batch"):
        MicroBatcher(Picky(), max_batch=0)
    with pytest.raises(ArgumentError, match="max_wait_ms"):
        MicroBatcher(Picky(), max_wait_ms=-1)
    with pytest.raises(ArgumentTypeError, match="scorer"):
        MicroBatcher("bertscore")
