"""The model process of ``nlgscore serve --workers N`` reading a worker's frame of many score
jobs: each job is checked on its own (a refused one gets its own answer), the checked ones that
may be scored as one are queued as one call (one run of the scheduler, not one per job), a job
that fails in that run costs only itself (the others are scored apart), and every job gets
exactly one answer with the bits of an offline call. A real ModelServer on a real ZeroMQ
``ipc://`` socket, its scheduler on a real (model-free) metric of the package's template."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, List

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("msgspec")
pytest.importorskip("prometheus_client")

from nlgscore.extend import Call, Item, Result, Scorer
from nlgscore.scheduler.microbatch import MicroBatcher
from nlgscore.serve.http.gate import Settings
from nlgscore.serve.http.in_process import InProcess
from nlgscore.serve.workers import ipc
from nlgscore.serve.workers.loop_socket import LoopSocket
from nlgscore.serve.workers.model_process import ModelServer

BOOM = "boom"  # a prediction this metric cannot score: its run raises
SLOW = "slow"  # a prediction this metric takes SLOW_S seconds to score
SLOW_S = 3.0  # against a --timeout of a third of it: the first run starts well within it on a loaded machine


class Ratio(Scorer):
    """Prediction length over reference length; raises on :data:`BOOM`."""

    name, needs, multiref, columns = "ratio", ("references",), "max", ("ratio",)

    def _score_items(self, items: List[Item], state: Any) -> Dict[str, np.ndarray]:
        if any(item.prediction == BOOM for item in items):
            raise ValueError(f"cannot score {BOOM!r}")
        if any(item.prediction == SLOW for item in items):
            time.sleep(SLOW_S)
        return {"ratio": np.array([len(i.prediction) / max(len(i.reference), 1) for i in items])}

    def _finish(self, call: Call, columns: Dict[str, np.ndarray]) -> Result:
        return Result(self.make_signature(call), columns, primary="ratio")

    def _signature_fields(self, call: Any) -> Dict[str, Any]:
        return {"unit": "char"}


def score_message(rid: int, predictions: Any, references: Any) -> List[Any]:
    return ["score", rid, predictions, references, None, {}, None]


def exchange(tmp_path, frames: List[List[List[Any]]], max_batch: int = 256, timeout: float = 60.0):
    """Send each of ``frames`` (a list of messages, as one frame) and wait for every score
    job's answer: ``({rid: (status, payload)}, runs of the scheduler after each frame, scorer)``."""
    scorer = Ratio()
    service = InProcess(Settings(max_batch=max_batch, timeout=timeout))
    server = ModelServer(service, ipc.address(str(tmp_path)), lambda: 0)
    service.loaded(scorer, MicroBatcher(scorer, max_batch=max_batch, max_wait_ms=0))
    answers: Dict[int, Any] = {}
    runs: List[int] = []

    async def main() -> None:
        import zmq

        stop = asyncio.Event()
        serving = asyncio.ensure_future(server.serve(stop))
        await asyncio.sleep(0.05)
        context = zmq.Context()
        sock = context.socket(zmq.DEALER)
        sock.connect(ipc.address(str(tmp_path)))
        arrived = asyncio.Event()
        link = LoopSocket(
            sock, lambda got: (answers.update({m[0]: m[1:] for m in ipc.messages(got[0])}), arrived.set())
        )
        try:
            for frame in frames:
                wanted = {message[1] for message in frame if message[0] == "score"}
                link.send([ipc.encode([ipc.MANY, frame])])
                while not wanted <= set(answers):
                    arrived.clear()
                    await asyncio.wait_for(arrived.wait(), 30)
                runs.append(service.batcher.batches)
        finally:
            link.close()
            context.term()
            stop.set()
            await serving

    try:
        asyncio.run(main())
    finally:
        service.batcher.close()
    return answers, runs, scorer


def test_a_frame_of_jobs_is_one_run_with_each_jobs_offline_bits(tmp_path):
    preds = [f"{'x' * (k + 1)} it is cold" for k in range(12)]
    refs = ["it is cold today"] * 12
    frame = [score_message(k, [p], [r]) for k, (p, r) in enumerate(zip(preds, refs))]
    again = [score_message(100 + k, [p], [r]) for k, (p, r) in enumerate(zip(preds[:5], refs))]
    answers, runs, scorer = exchange(tmp_path, [frame, again])
    offline = scorer.compute(preds, refs).scores
    assert sorted(answers) == list(range(12)) + list(range(100, 105))
    for k in range(12):
        status, payload = answers[k]
        assert status == 200
        assert ipc.result_from(payload).scores == [offline[k]]  # == : the offline bits
    assert runs == [1, 2]  # twelve jobs, one run; five more, one more run


def test_a_refused_job_and_a_failing_job_cost_only_themselves(tmp_path):
    preds = ["it is cold", BOOM, "it was cold", "cold it is"]
    frame = [score_message(k, [p], ["it is cold today"]) for k, p in enumerate(preds)]
    frame.insert(2, score_message(10, "not a list", ["it is cold today"]))  # refused by the checks
    frame.insert(3, ["cancel", 99])  # a cancel of an unknown job, between jobs: ignored, order kept
    answers, _, scorer = exchange(tmp_path, [frame])
    assert sorted(answers) == [0, 1, 2, 3, 10]
    assert answers[10][0] == 400 and "predictions" in answers[10][1][0]
    assert answers[1][0] == 500 and BOOM in answers[1][1][0]
    for k in (0, 2, 3):
        assert answers[k][0] == 200
        assert ipc.result_from(answers[k][1]).scores == scorer.compute([preds[k]], ["it is cold today"]).scores


def test_a_joined_call_holds_at_most_max_batch_predictions(tmp_path):
    frame = [score_message(k, ["it is cold"] * 3, ["it is"] * 3) for k in range(5)]
    answers, runs, _ = exchange(tmp_path, [frame], max_batch=7)
    assert all(answers[k][0] == 200 and len(ipc.result_from(answers[k][1]).scores) == 3 for k in range(5))
    assert runs == [3]  # 3 + 3, 3 + 3, 3 predictions: never a run past --max-batch


def test_a_joined_call_past_its_deadline_is_answered_504_not_scored_again(tmp_path):
    # --max-batch 2: the slow job and the next one run first; the last two, joined, wait past
    # --timeout and are dropped by the scheduler, which is their answer (never a second queueing)
    frame = [score_message(k, [p], ["it is cold"]) for k, p in enumerate([SLOW, "it is", "it was", "it is so"])]
    answers, runs, _ = exchange(tmp_path, [frame], max_batch=2, timeout=SLOW_S / 3)
    assert answers[0][0] == 200 and answers[1][0] == 200
    assert answers[2][0] == 504 and answers[3][0] == 504, (answers[2], answers[3])
    assert runs == [1]  # the dropped call never ran


def test_a_message_that_cannot_be_encoded_costs_only_its_poster():
    """One message, one fate: a message is encoded when posted, so one that cannot be (an integer
    beyond 64 bits, a lone surrogate) is refused to its poster, naming the field, and the others
    posted in the same pass travel in one frame, each decoded on its own."""
    sent: List[List[bytes]] = []

    async def main() -> List[str]:
        outbox = ipc.Outbox(sent.append)
        refused = []
        for message in (
            score_message(1, ["a"], ["b"]),
            ["score", 2, ["a"], ["b"], None, {"context": 2**64}, None],
            score_message(3, ["x\ud800"], ["b"]),
            score_message(4, ["c"], ["d"]),
        ):
            try:
                outbox.post(message)
            except ipc.Unsendable as err:
                refused.append(str(err))
        await asyncio.sleep(0)
        return refused

    refused = asyncio.run(main())
    assert [reason.split(" cannot be sent")[0] for reason in refused] == ["options.context", "predictions[0]"]
    assert len(sent) == 1  # one frame for the pass
    assert [message[1] for message in ipc.messages(sent[0][0])] == [1, 4]
