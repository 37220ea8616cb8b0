"""/v1/matrix goes through the batcher's Call queue: a long matrix call that times out stops
between its chunks, so the next /v1/score is not held behind it (it borrowed a lock before)."""

from __future__ import annotations

import time

import pytest
from test_microbatch import Picky

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from nlgscore.serve.http.app import create_app, wait_ready

CHUNK_SECONDS = 0.05  # each run (a matrix chunk) takes at least this long


class Slow(Picky):
    """Picky's word overlap, taking CHUNK_SECONDS per run of items."""

    def _score_items(self, items, state):
        time.sleep(CHUNK_SECONDS)
        return super()._score_items(items, state)


def test_a_timed_out_matrix_does_not_hold_the_next_score():
    scorer = Slow()
    refs = [f"r{j}" for j in range(4096)]  # one matrix row per chunk: 200 chunks, >= 10 s in all
    with TestClient(create_app(scorer, timeout=2.0)) as client:
        wait_ready(client)
        long = client.post("/v1/matrix", json={"predictions": [f"p{i}" for i in range(200)], "references": refs})
        assert long.status_code == 504
        # Stopped at its next chunk (50 ms), so this one is scored well within its 2 s.
        answer = client.post("/v1/score", json={"predictions": ["a b"], "references": ["a"]})
        assert answer.status_code == 200 and answer.json()["scores"] == [0.5]
        small = client.post("/v1/matrix", json={"predictions": ["a b", "a"], "references": ["a", "b"]})
        assert small.json()["matrix"] == scorer.matrix(["a b", "a"], ["a", "b"]).tolist()
