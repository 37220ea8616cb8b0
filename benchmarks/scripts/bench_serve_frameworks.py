"""Starlette vs FastAPI on uvicorn: the per-request cost of the stack nlgscore serve runs on.

Each framework serves the same trivial POST endpoint (parse a {"predictions", "references"}
body, check it, answer one score per prediction) in its own uvicorn process (one worker, loopback);
64 concurrent httpx clients send single-item requests. Both sides are timed in one run,
alternating, so that a shared machine's load hits both alike.

    python -m benchmarks bench_serve_frameworks --requests 3000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time

STARLETTE = """
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def score(request):
    body = await request.json()
    preds, refs = body.get("predictions"), body.get("references")
    if not isinstance(preds, list) or not isinstance(refs, list) or len(preds) != len(refs):
        return JSONResponse({"error": "predictions/references"}, status_code=400)
    return JSONResponse({"scores": [0.5] * len(preds)})
app = Starlette(routes=[Route("/v1/score", score, methods=["POST"])])
"""

FASTAPI = """
from typing import List
from fastapi import FastAPI
from pydantic import BaseModel
class Body(BaseModel):
    predictions: List[str]
    references: List[str]
app = FastAPI()
@app.post("/v1/score")
async def score(body: Body):
    return {"scores": [0.5] * len(body.predictions)}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def load(port: int, requests: int, clients: int) -> float:
    import httpx

    body = {"predictions": ["The cat sat on the mat."], "references": ["A cat was on the mat."]}
    todo = iter(range(requests))
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=httpx.Limits(max_connections=clients)
    ) as client:

        async def worker():
            for _ in todo:
                r = await client.post("/v1/score", json=body)
                assert r.status_code == 200, r.text

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return requests / (time.perf_counter() - start)


def serve(source: str, port: int, folder: str) -> subprocess.Popen:
    name = f"app_{port}"
    with open(os.path.join(folder, name + ".py"), "w") as handle:
        handle.write(source)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", f"{name}:app", "--port", str(port), "--log-level", "warning"], cwd=folder
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        servers = {
            name: (serve(src, port, folder), port)
            for name, src, port in (("starlette", STARLETTE, free_port()), ("fastapi", FASTAPI, free_port()))
        }
        try:
            rates = {name: [] for name in servers}
            for _ in range(args.rounds):
                for name, (_, port) in servers.items():
                    rates[name].append(asyncio.run(load(port, args.requests, args.clients)))
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait()
    with open("/proc/loadavg") as handle:
        loadavg = handle.read().split()[:3]
    best = {name: max(r) for name, r in rates.items()}
    print(
        json.dumps(
            {
                "requests_per_s": rates,
                "best": best,
                "starlette_over_fastapi": best["starlette"] / best["fastapi"],
                "loadavg": loadavg,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
