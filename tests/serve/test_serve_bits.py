"""Every serving path returns the offline bits: ``acompute``, the
micro-batcher, ``/v1/score``, ``/v1/matrix`` and ``nlgscore.load(URL)`` give each item exactly
(``==``) what one offline ``compute``/``matrix`` gives, in float32 and bfloat16, under each CPU
kernel (the ``kernel`` fixture; a served process inherits its ``NLGSCORE_ONEDNN``).

tests/serve/test_serve.py holds the float32 ``/v1/score`` check; here the rest, on MiniLM layer 2.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from servers import ServeProcess

import nlgscore
from nlgscore.scheduler.microbatch import MicroBatcher

httpx = pytest.importorskip("httpx")
pytestmark = pytest.mark.filterwarnings("ignore:BERTScore. 1 empty candidate")  # the empty candidate is meant

SPEC = "bertscore:minilm:L2"
PREDS = [f"The {w} sat on mat {i}." for i, w in enumerate(["cat", "dog", "bird", "fox", "cow", "owl"] * 2)] + [
    "",
    "A long " + "word " * 60,
]
REFS = [f"A {w} is on the mat." for w in ["cat", "dog", "bird"] * 4] + ["A cat is on the mat.", "A dog is on the mat."]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_acompute_and_the_micro_batcher_give_the_offline_bits(kernel, dtype):
    scorer = nlgscore.load(SPEC, dtype=dtype)
    offline = scorer.compute(PREDS, REFS)
    batcher = MicroBatcher(scorer, max_batch=5, max_wait_ms=20)  # merges calls into other batch shapes

    async def main():
        merged = await asyncio.gather(*(batcher.acompute([p], [r]) for p, r in zip(PREDS, REFS)))
        direct = await asyncio.gather(*(scorer.acompute([p], [r]) for p, r in zip(PREDS, REFS)))
        return merged, direct

    try:
        merged, direct = asyncio.run(main())
    finally:
        batcher.close()
    assert [r.scores[0] for r in merged] == offline.scores
    assert [r.scores[0] for r in direct] == offline.scores
    assert [r.precision[0] for r in merged] == list(offline.precision)


@pytest.fixture(scope="module")
def bf16_servers():
    """One bfloat16 server of SPEC per NLGSCORE_ONEDNN value, started under that value."""
    servers = {}
    yield servers
    for proc in servers.values():
        assert proc.terminate() == 0, proc.output()
        proc.close()


def test_a_bf16_server_and_its_client_give_the_offline_bits(kernel, bf16_servers):
    """/v1/score (concurrent single-pair requests the server merges), /v1/matrix and the
    RemoteScorer of ``nlgscore.load(URL)``: the bits of the same bfloat16 model offline."""
    if kernel.onednn not in bf16_servers:
        bf16_servers[kernel.onednn] = ServeProcess(
            SPEC, "--dtype", "bfloat16", "--max-batch", "8", "--max-wait-ms", "20"
        )
        bf16_servers[kernel.onednn].wait_ready()
    server = bf16_servers[kernel.onednn]
    local = nlgscore.load(SPEC, dtype="bfloat16")
    offline = local.compute(PREDS, REFS)

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            return await asyncio.gather(
                *(client.post("/v1/score", json={"predictions": [p], "references": [r]}) for p, r in zip(PREDS, REFS))
            )

    assert [a.json()["scores"][0] for a in asyncio.run(main())] == offline.scores
    grid = server.post("/v1/matrix", json={"predictions": PREDS[:4], "references": REFS[4:8]}).json()
    assert np.array_equal(np.asarray(grid["matrix"]), local.matrix(PREDS[:4], REFS[4:8]))
    remote = nlgscore.load(server.url)
    assert str(remote.signature) == str(offline.signature) and "bfloat16" in str(offline.signature)
    assert remote.compute(PREDS, REFS).scores == offline.scores
    assert np.array_equal(
        remote.matrix(PREDS[:3], REFS[:5], column="recall"), local.matrix(PREDS[:3], REFS[:5], column="recall")
    )
