"""RemoteScorer keeps its connections: one pooled client per scorer and event loop, closed with it.

A real ``nlgscore serve`` on 127.0.0.1 behind a TCP relay that counts the connections clients
open and how many are still open: awaited calls in one loop (``acompute``, verl's
``compute_score_async``, the verifiers reward) share one connection; ``close``/``aclose`` and the
context managers close them; a process that never closes its scorer exits without a warning.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time

import pytest
from servers import serving

import nlgscore

pytest.importorskip("httpx")


class CountingRelay:
    """Relays 127.0.0.1:port to the server, counting connections opened and still open."""

    def __init__(self, target: int) -> None:
        self.target, self.opened, self.open = target, 0, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.opened += 1
                self.open += 1
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            if from_client:
                with self.lock:
                    self.open -= 1
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def settled(self, open_count: int, seconds: float = 10.0) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.open == open_count:
                return True
            time.sleep(0.02)
        return False


@pytest.fixture(scope="module")
def server():
    yield from serving("chrf")


@pytest.fixture()
def relay(server):
    relay = CountingRelay(server.port)
    yield relay
    relay.listener.close()


def test_awaited_calls_share_one_connection_per_loop(relay):
    scorer = nlgscore.load(relay.url)
    assert relay.opened == 1  # /health, on the blocking client

    async def twenty():
        return [(await scorer.acompute(["The cat sat."], ["A cat sat."])).scores[0] for _ in range(20)]

    scores = asyncio.run(twenty())
    assert len(set(scores)) == 1 and relay.opened == 2  # one more connection for the loop, reused 20 times
    assert relay.settled(1)  # asyncio.run closed its loop's client; the blocking one stays open
    assert scorer.compute(["The cat sat."], ["A cat sat."]).scores[0] == scores[0] and relay.opened == 2
    scorer.close()
    assert relay.settled(0)


def test_verl_and_verifiers_rewards_reuse_the_scorers_client(relay):
    from nlgscore.integrations.verifiers import reward_function
    from nlgscore.integrations.verl import compute_score_async

    reward = reward_function(url=relay.url)  # the process's cached scorer for this url, shared with verl's

    async def rewards():
        verl = [await compute_score_async("chat", "The cat sat.", "A cat sat.", url=relay.url) for _ in range(10)]
        verifiers = [
            await reward(completion=[{"role": "assistant", "content": "The cat sat."}], answer="A cat sat.")
            for _ in range(10)
        ]
        return verl + verifiers

    values = asyncio.run(rewards())
    assert len(set(values)) == 1 and relay.opened == 2  # /health once, then one connection for all 20 rewards


def test_close_aclose_and_context_managers_close_the_connections(relay):
    with nlgscore.load(relay.url) as scorer:
        scorer.compute(["a"], ["b"])
        assert relay.open == 1
    assert relay.settled(0)

    loop = asyncio.new_event_loop()  # a long-lived loop, not asyncio.run: the scorer closes its client there
    try:
        scorer = nlgscore.load(relay.url)
        loop.run_until_complete(scorer.acompute(["a"], ["b"]))
        assert relay.open == 2
        scorer.close()
        assert relay.settled(0)
    finally:
        loop.close()

    async def scoped():
        async with nlgscore.load(relay.url) as remote:
            await remote.acompute(["a"], ["b"])
            assert relay.open == 2
        assert relay.settled(0, 5)  # aclose awaited the loop's client and closed the blocking one

    asyncio.run(scoped())


def test_a_process_that_never_closes_its_scorer_exits_without_warnings(server):
    program = f"""
import asyncio, nlgscore
scorer = nlgscore.load({server.url!r})
asyncio.run(scorer.acompute(["a"], ["b"]))
loop = asyncio.new_event_loop()  # a loop of its own, ended as asyncio.run ends one
loop.run_until_complete(scorer.acompute(["a"], ["b"]))
loop.run_until_complete(loop.shutdown_asyncgens())
loop.close()
scorer.compute(["a"], ["b"])
"""
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    noise = [
        line
        for line in done.stderr.splitlines()
        if "Warning" in line or "Unclosed" in line or "Exception ignored" in line
    ]
    assert noise == [], done.stderr


def test_without_aiohttp_the_httpx_client_is_pooled_the_same_way(relay):
    program = f"""
import sys
sys.modules["aiohttp"] = None  # aiohttp not installed: the scorer's async client is httpx's
import asyncio, nlgscore
scorer = nlgscore.load({relay.url!r})
async def ten():
    return {{(await scorer.acompute(["The cat sat."], ["A cat sat."])).scores[0] for _ in range(10)}}
assert len(asyncio.run(ten())) == 1
"""
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert relay.opened == 2, done.stderr  # /health, then one connection for ten awaited calls
    assert [line for line in done.stderr.splitlines() if "Warning" in line or "Exception ignored" in line] == [], (
        done.stderr
    )
