"""The public front door (make_call / run / Call.concat / Result.split) and the batcher's Call queue.

The scorer here is a real Scorer (word overlap) whose ``run`` can be held on a gate, so a test
decides what is queued while the worker is busy; ``runs`` records each run's predictions.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from test_microbatch import Picky

from nlgscore.core.call import Call, CallCancelled
from nlgscore.scheduler.microbatch import MicroBatcher


class Gated(Picky):
    """Picky (held on "hold"), recording each run's predictions and counting checks."""

    name = "gated"
    columns = ("jaccard",)

    def __init__(self, **options):
        super().__init__(**options)
        self.runs: list = []
        self.checks = 0

    def _call_needs(self, references, sources, options):
        self.checks += 1  # once per make_call: the front half runs once per request
        return ("references",)

    def run(self, call):
        if isinstance(call, Call):
            self.runs.append(list(call.predictions))
        return super().run(call)


def held(batcher):
    """Occupy the worker with a held call; returns its future (release with scorer.gate.set())."""
    future = batcher.submit(["hold"], ["hold"])
    deadline = time.monotonic() + 30
    while not batcher.scorer.runs and time.monotonic() < deadline:
        time.sleep(0.01)
    return future


def test_compute_is_run_of_make_call_and_concat_splits_back():
    scorer = Gated()
    a = scorer.make_call(["a b", "c"], [["a b", "a"], "d"])
    b = scorer.make_call(["x y"], [["x"]])
    whole = scorer.run(Call.concat([a, b]))
    parts = whole.split([a.size, b.size])
    assert [p.scores for p in parts] == [
        scorer.compute(["a b", "c"], [["a b", "a"], "d"]).scores,
        scorer.compute(["x y"], ["x"]).scores,
    ]
    with pytest.raises(ValueError, match="sizes add up"):
        whole.split([1])
    with pytest.raises(ValueError, match="merge_key"):
        Call.concat([a, scorer.make_call(["a"], ["a"], batch_size=3)])  # another batch size: another key


def test_each_request_is_checked_once_and_the_batcher_needs_only_make_call_and_run():
    scorer = Gated()

    class Duck:  # the batcher's whole view of a scorer: no private hook
        name = "duck"
        make_call, run = scorer.make_call, scorer.run

    with MicroBatcher(Duck(), max_wait_ms=20) as batcher:
        futures = [batcher.submit([f"w{i} v"], [f"w{i}"]) for i in range(5)]
        assert [f.result(10).scores for f in futures] == [[0.5]] * 5
    assert scorer.checks == 5  # one check per request (the old batcher checked, then compute checked again)


def test_an_idle_worker_does_not_wait_and_on_batch_errors_do_not_kill_it():
    def broken(*_):
        raise RuntimeError("metrics backend down")

    with MicroBatcher(Gated(), max_wait_ms=60_000, max_batch=100, on_batch=broken) as batcher:
        assert batcher.submit(["a"], ["a"]).result(timeout=20).scores == [1.0]  # not 60 s: the worker was idle
        assert batcher.submit(["a b"], ["a"]).result(timeout=20).scores == [0.5]  # the worker survived on_batch


def test_cancelled_and_expired_calls_are_dropped_unscored():
    scorer = Gated()
    with MicroBatcher(scorer, max_wait_ms=0) as batcher:
        first = held(batcher)
        left = scorer.make_call(["client left"], ["x"])
        gone = batcher.submit_call(left)
        late = batcher.submit_call(scorer.make_call(["too late"], ["x"]), deadline=time.monotonic())
        kept = batcher.submit(["kept"], ["kept"])
        left.cancel()
        scorer.gate.set()
        assert first.result(20).scores == [1.0] and kept.result(20).scores == [1.0]
    assert gone.cancelled()
    with pytest.raises(TimeoutError, match="deadline"):
        late.result(1)
    assert [p for run in scorer.runs for p in run] == ["hold", "kept"]
    assert batcher.dropped == {"deadline": 1, "cancelled": 1}  # what a server's /metrics reports


def test_token_budget_batches_and_the_oldest_call_goes_first():
    scorer = Gated()
    short, long = "a b", " ".join(["word"] * 30)  # ~2 and ~38 estimated tokens per text
    with MicroBatcher(scorer, max_wait_ms=0, max_tokens=200) as batcher:
        held(batcher)
        futures = [batcher.submit([long if i % 2 else short], [long if i % 2 else short]) for i in range(12)]
        scorer.gate.set()
        assert [f.result(20).scores for f in futures] == [[1.0]] * 12
    batches = scorer.runs[1:]
    assert batches[0][0] == short  # the oldest call first, whatever its length
    cost = [sum(2 * (len(p) // 4 + 2) for p in run) for run in batches]
    assert all(c <= 200 for c in cost) and len(batches) == 3, cost  # by tokens, not by count (max_batch 256: one run)
    assert batches[0].count(short) == 6 and batches[0].count(long) == 2  # the nearest lengths first, then what fits


def test_a_matrix_call_stops_between_chunks_once_cancelled():
    scorer = Gated()
    call = scorer.make_matrix_call([f"p{i}" for i in range(3)], [f"r{j}" for j in range(4096)])  # one row per chunk
    real_run = scorer.run

    def run(inner):
        out = real_run(inner)
        call.cancel()  # the client leaves while the first chunk runs
        return out

    scorer.run = run
    with pytest.raises(CallCancelled):
        real_run(call)
    assert len(scorer.runs) == 1  # one chunk scored, not three


def test_the_next_batch_is_prepared_while_the_model_runs():
    class Ahead(Picky):
        prepares_apart = True  # its scoring does not touch what preparing does

        def _prepare(self, call, items):
            self.prepared.append((call.predictions, threading.current_thread().name))
            return call

    scorer = Ahead()
    scorer.prepared = []
    with MicroBatcher(scorer, max_wait_ms=0, max_batch=2) as batcher:
        held = batcher.submit(["hold"], ["hold"])
        while batcher.queued:  # taken
            time.sleep(0.01)
        nxt = [batcher.submit([p], ["a"]) for p in ("a", "a b")]  # a run's worth (max_batch=2)
        deadline = time.monotonic() + 20
        while len(scorer.prepared) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [p for p, _ in scorer.prepared] == [["hold"], ["a", "a b"]]  # tokenized while the model holds "hold"
        scorer.gate.set()
        assert held.result(20).scores == [1.0] and [f.result(20).scores for f in nxt] == [[1.0], [0.5]]
    assert len(scorer.prepared) == 2 and {name for _, name in scorer.prepared} == {
        f"nlgscore-microbatch-{scorer.name}"
    }  # once each, on the feeder


def test_run_call_drops_a_call_whose_client_left_or_whose_time_ran_out():
    scorer = Gated()

    async def gone():
        return True

    with MicroBatcher(scorer, max_wait_ms=0) as batcher:
        first = held(batcher)
        with pytest.raises(CallCancelled, match="disconnected"):
            asyncio.run(batcher.run_call(scorer.make_call(["left"], ["x"]), disconnected=gone))
        with pytest.raises(TimeoutError):
            asyncio.run(batcher.run_call(scorer.make_call(["slow"], ["x"]), timeout=0.05))
        scorer.gate.set()
        assert first.result(20).scores == [1.0]
        assert asyncio.run(batcher.run_call(scorer.make_call(["a"], ["a"]), timeout=20)).scores == [1.0]
    assert [p for run in scorer.runs for p in run] == ["hold", "a"]  # neither dropped call was scored


def test_run_call_is_cancelled_the_moment_its_client_leaves_and_never_for_a_broken_watch():
    """The client's leaving is an event (an ASGI server's receive() returning http.disconnect), not
    a poll: the queued call is cancelled as soon as the watch returns, while the model still holds
    another run; a watch that fails refuses nothing; a watch still waiting when the answer comes is
    cancelled (no task left behind)."""
    scorer = Gated()
    with MicroBatcher(scorer, max_wait_ms=0) as batcher:
        first = held(batcher)

        async def leaves_later():
            left = asyncio.Event()
            watch_ended = []

            async def gone():
                await left.wait()
                watch_ended.append(True)

            task = asyncio.ensure_future(batcher.run_call(scorer.make_call(["left later"], ["x"]), disconnected=gone))
            await asyncio.sleep(0.05)
            assert not task.done() and batcher.queued == 1  # queued behind "hold", watched
            left.set()
            with pytest.raises(CallCancelled, match="disconnected"):
                await task
            return watch_ended, batcher.queued

        assert asyncio.run(leaves_later()) == ([True], 1)  # still queued (dropped when taken), the model still held

        async def broken():
            raise RuntimeError("the receive channel broke")

        async def stays():
            await asyncio.sleep(3600)

        async def answered():
            watches = []

            async def watched():
                watches.append(asyncio.current_task())
                await stays()

            broke = asyncio.ensure_future(
                batcher.run_call(scorer.make_call(["a"], ["a"]), timeout=20, disconnected=broken)
            )
            kept = asyncio.ensure_future(
                batcher.run_call(scorer.make_call(["a b"], ["a"]), timeout=20, disconnected=watched)
            )
            await asyncio.sleep(0.05)
            scorer.gate.set()
            results = [(await broke).scores, (await kept).scores]
            await asyncio.sleep(0)
            return results, [w.cancelled() for w in watches]

        assert asyncio.run(answered()) == ([[1.0], [0.5]], [True])
        assert first.result(20).scores == [1.0]
    assert "left later" not in [p for run in scorer.runs for p in run]  # never scored


def test_a_batch_prepared_ahead_is_checked_again_before_the_model_runs_it():
    class Ahead(Gated):
        prepares_apart = True

    scorer = Ahead()
    with MicroBatcher(scorer, max_wait_ms=0, max_batch=3) as batcher:
        first = held(batcher)
        left, late = scorer.make_call(["left"], ["x"]), scorer.make_call(["late"], ["x"])
        futures = [
            batcher.submit_call(left),
            batcher.submit_call(late, deadline=time.monotonic() + 0.3),
            batcher.submit(["kept"], ["kept"]),
        ]
        while batcher.queued:  # a run's worth (max_batch=3): taken and prepared while "hold" runs
            time.sleep(0.01)
        left.cancel()  # its client leaves, and the other's deadline passes, while the model holds "hold"
        time.sleep(0.4)
        scorer.gate.set()
        assert first.result(20).scores == [1.0] and futures[2].result(20).scores == [1.0]
    with pytest.raises(CallCancelled):
        futures[0].result(1)
    with pytest.raises(TimeoutError, match="deadline"):
        futures[1].result(1)
    assert [p for run in scorer.runs for p in run] == ["hold", "kept"] and batcher.dropped == {
        "deadline": 1,
        "cancelled": 1,
    }


def answer_a_run(batcher, n):
    """A held call, then a run of ``n`` calls queued behind it, answered: the worker has just
    answered ``n`` callers (the situation in which closed-loop callers come back)."""
    first = held(batcher)
    answered = [batcher.submit([f"w{i} v"], [f"w{i}"]) for i in range(n)]
    batcher.scorer.gate.set()
    assert first.result(20).scores == [1.0] and [f.result(20).scores for f in answered] == [[0.5]] * n


def test_the_callers_just_answered_come_back_as_one_run_and_a_lone_caller_never_waits():
    """After a run of N calls, calls that come within max_wait_ms of its end are taken as its
    callers coming back: they wait (at most max_wait_ms, here 60 s) until N are queued, then run at
    once. Before, the first caller back found the model idle and ran alone (over HTTP, 64 clients:
    runs of 1 and 63 in turn); and a run that waited the whole max_wait_ms would time out here."""
    scorer = Gated()
    with MicroBatcher(scorer, max_wait_ms=60_000, max_batch=100) as batcher:
        answer_a_run(batcher, 4)
        back = [batcher.submit([f"x{i} v"], [f"x{i}"]) for i in range(2)]
        time.sleep(0.3)
        assert not any(f.done() for f in back)  # 2 of the 4 callers are back: the others are awaited
        back += [batcher.submit([f"y{i} v"], [f"y{i}"]) for i in range(2)]
        assert [f.result(20).scores for f in back] == [[0.5]] * 4  # all 4 back: at once, not after 60 s
    assert [len(run) for run in scorer.runs] == [1, 4, 4]

    lone = Gated()
    with MicroBatcher(lone, max_wait_ms=60_000) as batcher:
        for r in range(4):  # each call right after its own answer: its one caller is back, no wait
            assert batcher.submit([f"a{r}"], [f"a{r}"]).result(timeout=20).scores == [1.0]
    assert [len(run) for run in lone.runs] == [1, 1, 1, 1]


def test_a_run_takes_as_many_queued_calls_as_its_budget_fits():
    """The mate window spans 4 runs of max_batch (1,024 calls): 200 queued single-item calls that fit
    one run's token budget and max_batch run as one, where a 64-call window made runs of 64."""
    scorer = Gated()
    with MicroBatcher(scorer, max_wait_ms=0) as batcher:
        first = held(batcher)
        futures = [batcher.submit([f"w{i} v"], [f"w{i}"]) for i in range(200)]
        scorer.gate.set()
        assert first.result(20).scores == [1.0] and [f.result(20).scores for f in futures] == [[0.5]] * 200
    assert [len(run) for run in scorer.runs] == [1, 200]


def test_callers_back_later_than_max_wait_still_make_one_run(monkeypatch):
    """Over HTTP the answers of a run leave one by one, so its callers can come back later than
    max_wait_ms after it: while fewer wait than it answered, within RETURN_WINDOW_S, they are still
    its callers and gather (each waiting at most max_wait_ms). Before, the first back ran alone.
    RETURN_WINDOW_S is widened so that the test does not hang on a loaded machine's timing."""
    from nlgscore.scheduler import microbatch

    monkeypatch.setattr(microbatch, "RETURN_WINDOW_S", 60.0)
    scorer = Gated()
    with MicroBatcher(scorer, max_wait_ms=1000, max_batch=100) as batcher:
        answer_a_run(batcher, 2)
        time.sleep(1.5)  # later than max_wait_ms after the run's end
        back = [batcher.submit(["x0 v"], ["x0"])]
        time.sleep(0.1)  # within max_wait_ms of the first one back
        back.append(batcher.submit(["x1 v"], ["x1"]))
        assert [f.result(20).scores for f in back] == [[0.5]] * 2
    assert [len(run) for run in scorer.runs] == [1, 2, 2]
