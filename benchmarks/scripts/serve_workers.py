"""Requests/s and server CPU per request of ``nlgscore serve`` with one process and with
``--workers N``, beside a bare Starlette JSON POST endpoint on uvicorn and ``/health``, measured
side by side in one run with Debian's ``wrk`` (a compiled load generator; the POST bodies from a
Lua script). The server's CPU is the user+system time of its whole process tree (parent, workers,
model process) over the run, and of its model process alone, read from /proc.

    python -m benchmarks serve_workers --spec chrf --workers 2 --seconds 10 --connections 64

By default every request is the same one-pair body (a near-zero-cost model's setting). With
``--data`` (a WMT DARR JSONL file) the bodies are distinct pairs of its texts, ``--items K`` pairs
a request (one row per K), and the offline call's items/s over the same pairs is measured too:
what a GPU server's requests/s is held against. ``--sides`` picks the servers, ``--json`` writes
the rows as they are measured. Prints a Markdown table. Needs ``wrk`` on PATH (``apt-get install
-y wrk``) or ``--wrk PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: the repository's packages importable

from nlgscore.serve.workers.supervisor import MODEL_NAME  # noqa: E402

BODY = {"predictions": ["It is cold."], "references": ["It is cold today."]}
# Counts the answers of each HTTP status in wrk's threads and prints them once the run is done
# (wrk's own summary counts the non-2xx answers only), so that a refused run says what it got.
STATUS_TALLY = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local line = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do table.insert(line, status .. "=" .. count) end
  end
  io.write("statuses: " .. table.concat(line, " ") .. "\\n")
end
"""
BARE = """
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
import json, sys, uvicorn

async def score(request):
    body = json.loads(await request.body())
    return JSONResponse({"scores": [0.5] * len(body["predictions"])})

app = Starlette(routes=[Route("/v1/score", score, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree(pid: int) -> List[int]:
    """``pid`` and its descendants."""
    parents: Dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [pid], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def cpu_seconds(pid: int) -> Tuple[float, float]:
    """User + system seconds of ``pid``'s process tree, and of its model process alone (the one
    named ``nlgscore-model``; 0 for a one-process server)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = model = 0.0
    for p in tree(pid):
        try:
            head, tail = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)
            fields = tail.split()
            seconds = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
        total += seconds
        if head.split("(", 1)[-1] == MODEL_NAME:
            model += seconds
    return total, model


def wait_ready(url: str, seconds: float = 180) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=2).status_code in (200, 404, 405):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not start")


def lua_bodies(bodies: List[Dict[str, Any]]) -> str:
    """A wrk script that sends ``bodies`` in turn (each thread from its own offset), with the status tally."""
    table = ",\n".join(json.dumps(json.dumps(body)) for body in bodies)
    return (
        f"bodies = {{\n{table}\n}}\n"
        'local headers = {["Content-Type"] = "application/json"}\n'
        "local turn = 0\n"
        "request = function()\n"
        "  turn = turn + 1\n"
        '  return wrk.format("POST", nil, headers, bodies[(turn + offset) % #bodies + 1])\n'
        "end\n"
        + STATUS_TALLY.replace(
            "function setup(thread) table.insert(threads, thread) end",
            'function setup(thread) table.insert(threads, thread); thread:set("offset", 7919 * #threads) end',
        ).replace(
            "function init(args) statuses = {} end",
            'function init(args) statuses = {}; offset = wrk.thread:get("offset") end',
        )
    )


def run_wrk(
    url: str,
    path: str,
    bodies: Optional[List[Dict[str, Any]]],
    seconds: int,
    connections: int,
    args: argparse.Namespace,
) -> float:
    """Requests answered in ``seconds`` (``bodies`` None: ``GET``); any non-2xx answer is an error."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(STATUS_TALLY if bodies is None else lua_bodies(bodies))
    out = subprocess.run(
        [args.wrk, f"-t{args.wrk_threads}", f"-c{connections}", f"-d{seconds}s", "-s", script.name, url + path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    os.unlink(script.name)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        tally = re.search(r"statuses: (.*)", out)
        raise RuntimeError(f"{url}{path}: {errors.group(1)} error answers ({tally.group(1) if tally else '?'})\n{out}")
    return requests


def measure(
    proc: subprocess.Popen,
    url: str,
    path: str,
    bodies: Optional[List[Dict[str, Any]]],
    args: argparse.Namespace,
    connections: int,
) -> Tuple[float, float, float]:
    """Requests/s, and the server's CPU µs per request: all its processes, and its model process's."""
    run_wrk(url, path, bodies, 2, connections, args)  # warm-up
    before, start = cpu_seconds(proc.pid), time.monotonic()
    requests = run_wrk(url, path, bodies, args.seconds, connections, args)
    elapsed, after = time.monotonic() - start, cpu_seconds(proc.pid)
    return requests / elapsed, (after[0] - before[0]) / requests * 1e6, (after[1] - before[1]) / requests * 1e6


def start(command: List[str], env: Dict[str, str], cwd: Optional[str] = None) -> subprocess.Popen:
    return subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def offline_cpu_per_item(spec: str) -> float:
    """The model's own CPU per item, in runs of 64 one-pair items, offline (µs)."""
    import nlgscore

    scorer = nlgscore.load(spec)
    preds, refs = [BODY["predictions"][0]] * 64, [BODY["references"][0]] * 64
    scorer.compute(preds, refs)
    rounds, start = 50, time.process_time()
    for _ in range(rounds):
        scorer.compute(preds, refs)
    return (time.process_time() - start) / (rounds * 64) * 1e6


def offline_items_per_s(spec: str, preds: List[str], refs: List[str]) -> float:
    """Items/s of one offline ``compute`` over ``preds``/``refs`` (warmed up on them once; median of 3)."""
    import nlgscore

    scorer = nlgscore.load(spec)
    scorer.compute(preds, refs)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        scorer.compute(preds, refs)
        times.append(time.perf_counter() - start)
    return len(preds) / sorted(times)[1]


def data_bodies(path: str, items: int, bodies: int) -> Tuple[List[Dict[str, Any]], List[str], List[str]]:
    """``bodies`` request bodies of ``items`` distinct pairs each from the DARR file ``path`` (its
    better and worse texts against their references), and all their pairs."""
    from benchmarks.harness.data import load_pairs

    n = items * bodies
    rows = load_pairs(path, (n + 1) // 2)
    preds, refs = (rows.better + rows.worse)[:n], (rows.refs + rows.refs)[:n]
    out = [{"predictions": preds[k : k + items], "references": refs[k : k + items]} for k in range(0, n, items)]
    return out, preds, refs


def write_json(path: Optional[str], report: Dict[str, Any]) -> None:
    """The report so far (rewritten after each row: a run stopped early keeps what it measured)."""
    if path:
        Path(path).write_text(json.dumps(report, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="chrf")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument(
        "--connections", type=int, nargs="+", default=[64], help="wrk connections; one row per count and server"
    )
    parser.add_argument("--wrk-threads", type=int, default=1)
    parser.add_argument("--wrk", default="wrk", help="the wrk binary")
    parser.add_argument("--threads", type=int, default=1, help="the model's torch threads (0: the server's default)")
    parser.add_argument(
        "--sides",
        default="bare,one,workers",
        help="servers to measure, in order: bare, one (one process), workers (--workers N), baseline",
    )
    parser.add_argument("--data", default=None, help="a WMT DARR JSONL file: distinct bodies from its pairs")
    parser.add_argument("--items", type=int, nargs="+", default=[1], help="pairs per request (with --data)")
    parser.add_argument(
        "--pairs", type=int, default=4096, help="distinct pairs sent in turn, per --items value (with --data)"
    )
    parser.add_argument("--json", default=None, help="write the rows here as they are measured")
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="DIR",
        help="a folder holding another version's nlgscore package: its one-process server is measured too",
    )
    parser.add_argument(
        "--baseline-workers", action="store_true", help="measure the --baseline version with --workers N too"
    )
    args = parser.parse_args()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if args.data:
        loads = {items: data_bodies(args.data, items, max(1, args.pairs // items)) for items in args.items}
    else:
        loads = {1: ([BODY], BODY["predictions"], BODY["references"])}
    report: Dict[str, Any] = {"spec": args.spec, "command": " ".join(sys.argv), "rows": []}
    sides = args.sides.split(",") + (["baseline"] if args.baseline and "baseline" not in args.sides else [])
    for side in sides:
        if side == "bare":
            port = free_port()
            bare = start([sys.executable, "-c", BARE, str(port)], env)
            try:
                wait_ready(f"http://127.0.0.1:{port}")
                for items, (bodies, _, _) in loads.items():
                    for connections in args.connections:
                        row = measure(bare, f"http://127.0.0.1:{port}", "/v1/score", bodies, args, connections)
                        report["rows"].append(("bare Starlette JSON POST on uvicorn", items, connections, *row))
                        write_json(args.json, report)
            finally:
                stop(bare)
            continue
        runs = {"one": [(1, None)], "workers": [(args.workers, None)]}.get(side)
        if runs is None:  # the baseline version
            runs = [(1, args.baseline)] + ([(args.workers, args.baseline)] if args.baseline_workers else [])
        for workers, source in runs:
            port = free_port()
            flags = ["--workers", str(workers)] if workers > 1 else []
            threads = ["--threads", str(args.threads)] if args.threads else []
            server = start(
                [sys.executable, "-m", "nlgscore", "serve", args.spec, "--port", str(port), "--no-progress"]
                + threads
                + flags,
                env if source is None else dict(env, PYTHONPATH=source),
                cwd=source,
            )
            url = f"http://127.0.0.1:{port}"
            try:
                wait_ready(url)
                name = (
                    f"nlgscore serve {args.spec}"
                    + (f" --workers {workers}" if workers > 1 else " (one process)")
                    + (" [baseline]" if source else "")
                )
                for items, (bodies, _, _) in loads.items():
                    for connections in args.connections:
                        row = measure(server, url, "/v1/score", bodies, args, connections)
                        report["rows"].append((f"{name}: POST /v1/score", items, connections, *row))
                        write_json(args.json, report)
                health = args.connections[-1]
                report["rows"].append(
                    (f"{name}: GET /health", 0, health, *measure(server, url, "/health", None, args, health))
                )
                write_json(args.json, report)
            finally:
                stop(server)
    if args.data:
        report["offline_items_per_s"] = {
            items: offline_items_per_s(args.spec, preds, refs) for items, (_, preds, refs) in loads.items()
        }
        model = None
    else:
        model = report["model_cpu_per_item_us"] = offline_cpu_per_item(args.spec)
    write_json(args.json, report)
    print_table(args, report, model)


def print_table(args: argparse.Namespace, report: Dict[str, Any], model: Optional[float]) -> None:
    if model is not None:
        print(
            f"wrk -t{args.wrk_threads} -d{args.seconds}s; {args.spec}; the model's own CPU per item offline "
            f"(runs of 64): {model:.0f} us\n"
        )
        print(
            "| server | connections | requests/s | server CPU per request (us) | its model process (us) "
            "| minus the model's (us) |"
        )
        print("|---|---:|---:|---:|---:|---:|")
    else:
        print(
            f"wrk -t{args.wrk_threads} -d{args.seconds}s; {args.spec}; offline items/s: {report['offline_items_per_s']}\n"
        )
        print(
            "| server | items a request | connections | requests/s | items/s | ÷ offline "
            "| server CPU per request (us) | its model process (us) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, items, connections, rate, cpu, model_process in report["rows"]:
        split = f"{model_process:,.0f}" if "--workers" in name else ""
        if model is not None:
            front = cpu - model if "/v1/score" in name and "nlgscore" in name else cpu
            print(f"| {name} | {connections} | {rate:,.0f} | {cpu:,.0f} | {split} | {front:,.0f} |")
        else:
            offline = report["offline_items_per_s"].get(items)
            ratio = f"{rate * items / offline:.2f}" if offline and items else ""
            print(
                f"| {name} | {items} | {connections} | {rate:,.0f} | {rate * items:,.0f} | {ratio} | {cpu:,.0f} | {split} |"
            )


if __name__ == "__main__":
    main()
