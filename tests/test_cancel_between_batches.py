"""A cancelled call stops between its batches; a merged call only once every call in it is cancelled.

The toy metric below is a real Scorer (``nlgscore.extend``) whose batch loop is the package's own
``run_batches``, one item per batch, with a hook the test uses to cancel a call after a chosen batch
or to hold a run: the cancel comes from inside the run, at a known batch, with no timing involved.
BERTScore is cancelled from a PyTorch forward hook on its encoder's embedding layer (one call per
encoder batch of one text, in the packed forward and in the model's own), BARTScore from one on its
decoder (one call per forward batch of one pair).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest

from nlgscore.core.call import Call, CallCancelled
from nlgscore.extend import Item, Result, Scorer, run_batches
from nlgscore.registry import load
from nlgscore.scheduler.microbatch import MicroBatcher

TINY_BART = Path(__file__).resolve().parent / "golden" / "tiny-bart"
WAIT_S = 60  # a guard against a hang only: every wait below is answered by the run itself


class Stepped(Scorer):
    """A prediction's length over its reference's, one item per batch; ``hook(predictions of the
    run, batches done)`` after each batch."""

    name, needs, multiref, columns = "stepped", ("references",), "max", ("ratio",)

    def __init__(self, hook: Optional[Callable[[List[str], int], None]] = None, **runtime: Any) -> None:
        super().__init__(**runtime)
        self.hook = hook
        self.batches = 0

    def _score_items(self, items: List[Item], call: Any) -> Dict[str, np.ndarray]:
        out = np.zeros(len(items))
        done = [0]

        def process(batch: List[int]) -> None:
            for i in batch:
                out[i] = len(items[i].prediction) / max(len(items[i].reference), 1)
            done[0] += 1
            self.batches += 1
            if self.hook is not None:
                self.hook([item.prediction for item in items], done[0])

        run_batches([len(i.prediction) for i in items], process, max_batch_size=1, progress=call.progress)
        return {"ratio": out}

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        return Result(self.make_signature(call), columns, primary="ratio")

    def _signature_fields(self, call: Any) -> Dict[str, Any]:
        return {"unit": "char"}


PREDS = [f"prediction number {i} {'x' * i}" for i in range(6)]
REFS = [f"reference {i}" for i in range(6)]


def test_a_cancelled_call_stops_after_the_batch_it_was_cancelled_in():
    calls: List[Call] = []
    scorer = Stepped(hook=lambda preds, done: calls[0].cancel() if done == 1 else None)
    calls.append(scorer.make_call(PREDS, REFS))
    with pytest.raises(CallCancelled):
        scorer.run(calls[0])
    assert scorer.batches == 1  # of 6: the second batch never ran


def test_a_call_cancelled_in_its_last_batch_keeps_its_answer():
    calls: List[Call] = []
    scorer = Stepped(hook=lambda preds, done: calls[0].cancel() if done == len(PREDS) else None)
    calls.append(scorer.make_call(PREDS, REFS))
    assert scorer.run(calls[0]).scores == Stepped().compute(PREDS, REFS).scores  # finished work is kept


def test_bertscore_stops_between_encoder_batches():
    scorer = load("bertscore:minilm", num_layers=2, batch_size=1)
    preds, refs = [f"The cat number {i} sat on the mat." for i in range(8)], ["A cat sat on a mat."] * 8
    forwards: List[int] = []
    handle = scorer.encoder.model.embeddings.register_forward_hook(lambda *args: forwards.append(1))
    try:
        scorer.compute(preds, refs)
        total = len(forwards)
        forwards.clear()
        call = scorer.make_call([p.replace("cat", "dog") for p in preds], [r.replace("cat", "dog") for r in refs])

        def cancel_after_first(*args: Any) -> None:
            forwards.append(1)
            call.cancel()

        handle.remove()
        handle = scorer.encoder.model.embeddings.register_forward_hook(cancel_after_first)
        with pytest.raises(CallCancelled):
            scorer.run(call)
    finally:
        handle.remove()
    # 9 distinct texts, one per batch (new texts: none in the text cache): stopped after the first
    assert total == 9 and len(forwards) == 1


def test_bartscore_stops_between_forward_batches():
    from nlgscore.seq2seq.bartscore import BARTScorer

    scorer = BARTScorer(checkpoint=str(TINY_BART), device="cpu", batch_size=1)
    preds, refs = [f"The cat number {i} sat." for i in range(6)], [f"A cat {i} sat on a mat." for i in range(6)]
    decoder, forwards = scorer.model.get_decoder(), []
    handle = decoder.register_forward_hook(lambda *args: forwards.append(1))
    try:
        scorer.compute(preds, refs)
        total = len(forwards)
        forwards.clear()
        call = scorer.make_call(preds, refs)

        def cancel_after_first(*args: Any) -> None:
            forwards.append(1)
            call.cancel()

        handle.remove()
        handle = decoder.register_forward_hook(cancel_after_first)
        with pytest.raises(CallCancelled):
            scorer.run(call)
    finally:
        handle.remove()
    assert total > 1 and len(forwards) == 1  # one pair per forward (batch_size=1): stopped after the first


def test_a_merged_call_runs_on_while_one_part_is_cancelled_and_stops_once_all_are():
    parts: List[Call] = []

    def cancel(preds: List[str], done: int) -> None:
        if done == 1:
            parts[0].cancel()

    scorer = Stepped(hook=cancel)
    parts.extend(scorer.make_call([p], [r]) for p, r in zip(PREDS[:3], REFS[:3]))
    merged = scorer.run(Call.concat(parts))
    answers = merged.split([1, 1, 1])
    assert scorer.batches == 3  # ran to the end for the parts still wanted
    for k in (1, 2):
        alone = Stepped().compute([PREDS[k]], [REFS[k]])
        assert np.array_equal(answers[k].columns()["ratio"], alone.columns()["ratio"])

    def cancel_all(preds: List[str], done: int) -> None:
        if done == 1:
            for part in everyone:
                part.cancel()

    scorer = Stepped(hook=cancel_all)
    everyone = [scorer.make_call([p], [r]) for p, r in zip(PREDS[:3], REFS[:3])]
    joined = Call.concat(everyone)
    assert not joined.cancelled
    with pytest.raises(CallCancelled):
        scorer.run(joined)
    assert scorer.batches == 1


def test_cancelling_a_merged_call_cancels_every_part():
    scorer = Stepped()
    parts = [scorer.make_call([p], [r]) for p, r in zip(PREDS[:2], REFS[:2])]
    Call.concat(parts).cancel()
    assert all(part.cancelled for part in parts)


def test_bertscore_merged_parts_keep_their_bits_when_another_part_is_cancelled():
    scorer = load("bertscore:minilm", num_layers=2, batch_size=1)
    preds = [f"The cat number {i} sat on the mat." for i in range(4)]
    refs = ["A cat sat on a mat.", "A dog ran.", "Stocks fell.", "It is cold."]
    whole = scorer.run(Call.concat([scorer.make_call([p], [r]) for p, r in zip(preds, refs)])).split([1] * 4)
    parts = [scorer.make_call([p], [r]) for p, r in zip(preds, refs)]
    handle = scorer.encoder.model.embeddings.register_forward_hook(lambda *args: parts[0].cancel())
    try:
        cut = scorer.run(Call.concat(parts)).split([1] * 4)
    finally:
        handle.remove()
    for k in range(1, 4):
        for name in ("precision", "recall", "f1"):
            assert np.array_equal(cut[k].columns()[name], whole[k].columns()[name])  # the check never changes batching


def test_the_micro_batcher_answers_a_part_cancelled_mid_run_with_call_cancelled_and_the_others_with_scores():
    started, gate, calls = threading.Event(), threading.Event(), {}

    def hook(preds: List[str], done: int) -> None:
        if preds == ["hold"]:  # the first run holds the worker while the others queue behind it
            started.set()
            assert gate.wait(WAIT_S)
        elif len(preds) > 1 and done == 1:  # the merged run, after its first batch
            calls["cancelled"].cancel()

    scorer = Stepped(hook=hook)
    with MicroBatcher(scorer, max_batch=64, max_tokens=1 << 20, max_wait_ms=0) as batcher:
        held = batcher.submit(["hold"], ["hold"])
        assert started.wait(WAIT_S)  # the worker runs the held call alone
        calls["cancelled"] = scorer.make_call([PREDS[0]], [REFS[0]])
        others = [scorer.make_call([p], [r]) for p, r in zip(PREDS[1:4], REFS[1:4])]
        futures = [batcher.submit_call(calls["cancelled"])] + [batcher.submit_call(call) for call in others]
        gate.set()
        assert held.result(WAIT_S).scores == Stepped().compute(["hold"], ["hold"]).scores
        with pytest.raises(CallCancelled):
            futures[0].result(WAIT_S)
        got = [future.result(WAIT_S).scores for future in futures[1:]]
    assert batcher.batches == 2  # the held run, then one merged run of all four
    assert scorer.batches == 1 + 4  # the merged run went on to its end for the others
    assert got == [Stepped().compute([p], [r]).scores for p, r in zip(PREDS[1:4], REFS[1:4])]


def test_the_micro_batcher_answers_every_part_of_a_run_cancelled_whole():
    started, gate, calls = threading.Event(), threading.Event(), []

    def hook(preds: List[str], done: int) -> None:
        if preds == ["hold"]:
            started.set()
            assert gate.wait(WAIT_S)
        elif len(preds) > 1 and done == 1:
            for call in calls:
                call.cancel()

    scorer = Stepped(hook=hook)
    with MicroBatcher(scorer, max_batch=64, max_tokens=1 << 20, max_wait_ms=0) as batcher:
        held = batcher.submit(["hold"], ["hold"])
        assert started.wait(WAIT_S)  # the worker runs the held call alone
        calls.extend(scorer.make_call([p], [r]) for p, r in zip(PREDS[:3], REFS[:3]))
        futures = [batcher.submit_call(call) for call in calls]
        gate.set()
        held.result(WAIT_S)
        for future in futures:
            with pytest.raises(CallCancelled):
                future.result(WAIT_S)
    assert scorer.batches == 1 + 1  # the merged run stopped after its first batch, and no part ran again


def test_acompute_coroutines_cancelled_mid_run_stop_their_merged_run():
    started, gate, kept = threading.Event(), threading.Event(), {}

    def hook(preds: List[str], done: int) -> None:
        if preds == ["hold"]:
            started.set()
            assert gate.wait(WAIT_S)
        elif len(preds) > 1 and done == 1:  # the merged run, after its first batch: every caller leaves
            for task in kept["leaving"]:
                kept["loop"].call_soon_threadsafe(task.cancel)
            assert kept["left"].wait(WAIT_S)  # set once the cancels reached their calls (see main)

    scorer = Stepped(hook=hook)

    async def main() -> None:
        kept["loop"], kept["left"] = asyncio.get_running_loop(), threading.Event()
        held = asyncio.ensure_future(batcher.acompute(["hold"], ["hold"]))
        while not started.is_set():  # the worker runs the held call alone
            await asyncio.sleep(0)
        kept["leaving"] = [asyncio.ensure_future(batcher.acompute([p], [r])) for p, r in zip(PREDS[:4], REFS[:4])]
        # A task is done after the callbacks of the future it awaited (acompute's cancel of its call) have run.
        gathered = asyncio.gather(*kept["leaving"], return_exceptions=True)
        gathered.add_done_callback(lambda done: kept["left"].set())
        while batcher.queued < 4:  # every call submitted
            await asyncio.sleep(0)
        gate.set()
        await held
        assert all(isinstance(answer, asyncio.CancelledError) for answer in await gathered)

    with MicroBatcher(scorer, max_batch=64, max_tokens=1 << 20, max_wait_ms=0) as batcher:
        asyncio.run(main())
    assert batcher.batches == 2  # the held run, then one merged run of all four
    assert scorer.batches == 1 + 1  # the merged run stopped after its first batch
