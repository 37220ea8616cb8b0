"""Out-of-memory back-off of nlgscore.backend.batching.run_batches with a real batch function.

There is no GPU here, so the CUDA out-of-memory error is injected: only the error is mocked
(raised once, before the real work of the first batch); the batch function itself is the real
MiniLM encoder forward, and the scores must equal an undisturbed run.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from nlgscore.backend.batching import run_batches

TEXTS = [f"sentence number {i} " + "word " * (i % 7) for i in range(23)]


def test_oom_on_first_batch_halves_budget_and_processes_each_item_once(minilm_scorer, caplog):
    encoder = minilm_scorer.encoder
    ids, _ = encoder.tokenize(TEXTS)
    calls, done = [], {}
    injected = []

    def process(batch):
        calls.append(list(batch))
        if not injected:  # the mocked part: the first call fails as a CUDA OOM would
            injected.append(len(batch))
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        emb = encoder.embed([ids[i] for i in batch])
        for row, i in enumerate(batch):
            assert i not in done, f"item {i} processed twice"
            done[i] = emb[row, : len(ids[i])].sum(0)

    budget = 4 * max(len(x) for x in ids)
    with caplog.at_level(logging.WARNING, logger="nlgscore.backend.batching"):
        final = run_batches([len(x) for x in ids], process, max_tokens=budget)

    assert final == budget // 2  # the budget shrank once
    assert sorted(done) == list(range(len(TEXTS)))  # every item exactly once
    assert any("out of memory" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert len(calls[1]) <= injected[0]  # the retried batch is no larger than the one that failed
    reference = encoder.embed(ids)
    for i in range(len(TEXTS)):
        np.testing.assert_allclose(done[i].numpy(), reference[i, : len(ids[i])].sum(0).numpy(), atol=1e-5)


def test_non_oom_errors_propagate():
    def process(batch):
        raise ValueError("a real bug")

    with pytest.raises(ValueError, match="a real bug"):
        run_batches([3, 3], process)
