"""MBR decoding and ``nlgscore serve`` on the device.

* ``mbr``: :func:`nlgscore.mbr.decode` with BERTScore (the embedded MiniLM, layer 4) for pools of
  N = 32 and 128 candidates, in fp32 and bf16: items/s and candidate pairs/s (N x (N - 1) per
  item). Pools come from the slice: item ``k``'s pool is the distinct system outputs of source
  segment ``7k``, then of the following segments, cut at N (the same work per item as N samples
  of one model).
* ``serve``: ``benchmarks/scripts/bench_serve.py --sections throughput``: 64 concurrent single-item clients
  against a real ``nlgscore serve`` process on the device, one process and ``--workers`` (the
  default on the machine: :func:`http_workers`), as a ratio to one offline ``compute`` of the same
  items in the same run (its JSON, as printed).
* ``http``: ``benchmarks/scripts/serve_workers.py`` with ``wrk`` (carried in ``.gpu/bin`` by
  ``benchmarks/gpu/wheels.sh``): requests/s of ``nlgscore serve bertscore:minilm --workers N``
  and of the one-process server, for 64 and 256 connections, each request one distinct pair of
  the slice or a group of 32, beside the offline call's items/s over the same pairs. Skipped,
  saying so, where no ``wrk`` is found.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from benchmarks.gpu.inputs import slice_path
from benchmarks.gpu.plan import CheckConfig, precision

REPO = Path(__file__).resolve().parents[2]
CLIENTS = 64


def pools(path: str, n: int, items: int, step: int = 7) -> List[List[str]]:
    """``items`` pools of ``n`` candidates (see the module docstring)."""
    from benchmarks.harness.data import load_pairs

    rows = load_pairs(path, load_pairs(path, 1).distinct_in_file)  # every usable row once
    by_source: Dict[str, List[str]] = {}
    for src, better, worse in zip(rows.srcs, rows.better, rows.worse):
        texts = by_source.setdefault(src, [])
        texts.extend(t for t in (better, worse) if t not in texts)
    segments = list(by_source.values())
    out = []
    for k in range(items):
        s, pool = (k * step) % len(segments), []
        while len(pool) < n:
            pool.extend(segments[s])
            s = (s + 1) % len(segments)
        out.append(pool[:n])
    return out


def mbr_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    from nlgscore.mbr import decode

    results: Dict[str, Any] = {}
    for mode in config.modes:
        with precision(mode) as dtype:
            from nlgscore.registry import load

            scorer = load("bertscore:minilm:L4", device=config.device, dtype=dtype)
            decode(scorer, pools(slice_path(config), 8, 2))  # warm-up
            for n, items in config.mbr_sizes.items():
                data = pools(slice_path(config), n, items)
                start = time.perf_counter()
                decode(scorer, data)
                seconds = time.perf_counter() - start
                results[f"{mode}_N{n}"] = {
                    "N": n,
                    "items": items,
                    "seconds": seconds,
                    "items_per_s": items / seconds,
                    "pairs_per_s": items * n * (n - 1) / seconds,
                }
                recorder.put("mbr", results)


def run_boxed(config: CheckConfig, section: str, command: List[str], recorder: Any) -> str:
    """Run a benchmark script in its own process group (on the time box's end it and the servers
    it started go together), with the repository importable and, off CUDA, no GPU; its stdout."""
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    if not config.device.startswith("cuda"):
        env["CUDA_VISIBLE_DEVICES"] = ""  # the server and the offline scorer both default to CUDA when there is one
    recorder.put("command", " ".join(command))
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO),
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=max(10.0, config.budget(section) - 5))
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        stdout, stderr = child.communicate()
        recorder.put("stderr_tail", (stderr or "")[-3000:])  # how far it got
        recorder.put("stdout_tail", (stdout or "")[-2000:])
        raise
    if child.returncode != 0:
        raise RuntimeError(f"{Path(command[1]).name} exited with {child.returncode}: {stderr[-2000:]}")
    return stdout


def serve_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    command = [
        sys.executable,
        str(REPO / "benchmarks" / "scripts" / "bench_serve.py"),
        "--sections",
        "throughput",
        "--spec",
        "bertscore:minilm",
        "--data",
        slice_path(config),
        "--n",
        str(config.serve_items),
        "--clients",
        str(CLIENTS),
        "--rounds",
        "1" if config.tiny else "2",
        "--server-workers",
        "1",
        str(http_workers(config)),
    ]
    rows = json.loads(run_boxed(config, "serve", command, recorder))["throughput"]  # one row per --clients value
    recorder.put("throughput", next(row for row in rows if row["clients"] == CLIENTS))


def http_workers(config: CheckConfig) -> int:
    """``--workers`` of the serving sections: what ``nlgscore serve`` takes by default on a CUDA
    machine (the cores less two, at most 8; :func:`nlgscore.cli.serve.default_workers`), 2 in the
    CPU dry run."""
    if config.tiny:
        return 2
    return max(1, min(8, (os.cpu_count() or 3) - 2))


def http_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    wrk = shutil.which("wrk")
    if wrk is None:
        recorder.put("skipped", "no wrk on PATH (benchmarks/gpu/wheels.sh carries one in .gpu/bin)")
        return
    out = Path(config.out) / "serve_workers.json"
    command = [
        sys.executable,
        str(REPO / "benchmarks" / "scripts" / "serve_workers.py"),
        "--spec",
        "bertscore:minilm",
        "--sides",
        "workers,one",
        "--workers",
        str(http_workers(config)),
        "--threads",
        "0",
        "--data",
        slice_path(config),
        "--items",
        *(("1", "4") if config.tiny else ("1", "32")),
        "--pairs",
        "32" if config.tiny else "4096",
        "--connections",
        *(("8",) if config.tiny else ("64", "256")),
        "--seconds",
        "1" if config.tiny else "4",
        "--wrk",
        wrk,
        "--wrk-threads",
        "1" if config.tiny else "2",
        "--json",
        str(out),
    ]
    try:
        stdout = run_boxed(config, "http", command, recorder)
    finally:
        if out.exists():  # written row by row: what was measured is kept
            recorder.put("report", json.loads(out.read_text(encoding="utf-8")))
    recorder.put("table", stdout)
