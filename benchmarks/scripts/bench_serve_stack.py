"""uvicorn's pure-Python stack (asyncio loop, h11 parser) against uvloop + httptools, serving the
same nlgscore app (bertscore:minilm, --max-batch 64 --max-wait-ms 5, no reference cache): 64
concurrent single-item HTTP clients against one offline compute of the same items, alternating.

    OMP_NUM_THREADS=1 python -m benchmarks bench_serve_stack --n 512 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository
sys.path.insert(0, str(REPO / "benchmarks" / "scripts"))
sys.path.insert(0, str(REPO / "tests"))

SERVER = """
import sys, uvicorn
from nlgscore.registry import load
from nlgscore.serve.http.app import create_app
app = create_app(load("bertscore:minilm"), max_batch=64, max_wait_ms=5, max_items=100000)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop=sys.argv[2], http=sys.argv[3], log_level="warning", access_log=False)
"""


def main() -> None:
    from bench_serve import clients_http, pairs
    from servers import free_port

    from nlgscore.registry import load

    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "wmt-kk-en.jsonl"))
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    preds, refs = pairs(args.data, args.n)
    stacks = {"asyncio+h11": ("asyncio", "h11"), "uvloop+httptools": ("uvloop", "httptools")}
    procs, urls = [], {}
    try:
        for name, (loop, http) in stacks.items():
            port = free_port()
            procs.append(subprocess.Popen([sys.executable, "-c", SERVER, str(port), loop, http], cwd=REPO))
            urls[name] = f"http://127.0.0.1:{port}"
        import httpx

        for url in urls.values():
            while True:
                try:
                    if httpx.get(url + "/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            asyncio.run(clients_http(url, preds[:64], refs[:64], 64))
        scorer = load("bertscore:minilm")
        scorer.compute(preds[:64], refs[:64])
        out = {"offline": [], **{name: [] for name in urls}, "loadavg": []}
        for _ in range(args.rounds):
            out["loadavg"].append(open("/proc/loadavg").read().split()[0])
            start = time.perf_counter()
            scorer.compute(preds, refs)
            out["offline"].append(time.perf_counter() - start)
            for name, url in urls.items():
                out[name].append(asyncio.run(clients_http(url, preds, refs, 64)))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    out["ratio"] = {name: [o / t for o, t in zip(out["offline"], out[name])] for name in urls}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
