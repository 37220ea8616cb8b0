"""RemoteScorer against a plain pooled HTTP client, side by side on one real server.

Starts ``nlgscore serve SPEC`` on a loopback port, then times, in alternating rounds, 512
single-pair requests sent concurrently (``asyncio.gather``, one event loop per round) by:

* ``nlgscore.load(URL).acompute`` (one scorer for all rounds, as a trainer keeps it);
* one ``aiohttp.ClientSession`` posting the same ``/v1/score`` bodies (when aiohttp is installed);
* with ``--httpx``, one ``httpx.AsyncClient`` session posting them.

Prints the median seconds per round of each and the ratio to the plain aiohttp session (httpx's
without aiohttp)::

    python -m benchmarks remote_client --spec chrf --calls 512 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


async def _scorer_round(scorer: Any, pairs: List[tuple]) -> None:
    await asyncio.gather(*(scorer.acompute([p], [r]) for p, r in pairs))


async def _httpx_round(url: str, pairs: List[tuple]) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        answers = await asyncio.gather(
            *(client.post("/v1/score", json={"predictions": [p], "references": [r]}) for p, r in pairs)
        )
    assert all(a.status_code == 200 for a in answers)


async def _aiohttp_round(url: str, pairs: List[tuple]) -> None:
    import aiohttp

    async def one(session: Any, p: str, r: str) -> None:
        async with session.post(url + "/v1/score", json={"predictions": [p], "references": [r]}) as answer:
            assert answer.status == 200
            await answer.json()

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(one(session, p, r) for p, r in pairs))


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="chrf")
    parser.add_argument("--calls", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--httpx", action="store_true", help="also time a plain httpx.AsyncClient session (slow: 20 s a round)"
    )
    args = parser.parse_args(argv)

    import nlgscore

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nlgscore",
            "serve",
            args.spec,
            "--port",
            str(port),
            "--no-progress",
            "--max-queue",
            str(4 * args.calls),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        scorer = nlgscore.load(url, wait=300)
        pairs = [(f"The cat sat on mat number {i}.", f"A cat sits on the mat {i}.") for i in range(args.calls)]
        runs: Dict[str, Callable[[], Any]] = {"nlgscore.load(URL).acompute": lambda: _scorer_round(scorer, pairs)}
        if args.httpx:
            runs["httpx session"] = lambda: _httpx_round(url, pairs)
        try:
            import aiohttp  # noqa: F401

            runs["aiohttp session"] = lambda: _aiohttp_round(url, pairs)
        except ImportError:
            pass
        for make in runs.values():  # warm-up: the server's first batches, the clients' imports
            asyncio.run(make())
        times: Dict[str, List[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, make in runs.items():
                start = time.perf_counter()
                asyncio.run(make())
                times[name].append(time.perf_counter() - start)
        scorer.close()
    finally:
        server.terminate()
        server.wait(30)
    base = statistics.median(times["aiohttp session" if "aiohttp session" in times else "httpx session"])
    print(
        f"CPU: {_cpu()} ({os.cpu_count()} CPUs); metric {args.spec}; {args.calls} concurrent single-pair calls; "
        f"median of {args.rounds} rounds"
    )
    print(f"| client | s per round | ratio to the {'aiohttp' if 'aiohttp session' in times else 'httpx'} session |")
    print("|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
