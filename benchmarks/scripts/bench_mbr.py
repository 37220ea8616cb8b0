"""MBR benchmark: nlgscore's ``nlgscore.mbr.decode`` against mbrs 0.1.8 and bert_score 0.3.13.

    python -m benchmarks bench_mbr --sizes 8,16,32,64 --items 32 --repeats 3 --json /tmp/mbr.json

Inputs: WMT21 de-en newstest2021 system outputs (``../shared/data/wmt21-de-en/hyp.*.en``, 19
systems). Item ``s`` is segment ``s``'s pool: its 19 system outputs (systems in name order), then,
for N > 19, the outputs of the following segments ``s+1, s+2, ...`` in the same order, cut at N
(a harder pool than 64 samples of one model, but the same work per item). Duplicate outputs are
kept, as a sampler's pool keeps them. Items start at segment 0 and step by 7 segments.

Each side runs in its own process (``benchmarks/scripts/mbr_bench_worker.py``): nlgscore from this venv,
bert_score from ``--bert-score-python`` and mbrs from ``--mbrs-python`` (each its own venv; mbrs
pins transformers 4 / numpy 1). Same model for all: the embedded all-MiniLM-L6-v2 folder at layer
4, fp32, CPU, the same torch threads. Every side is loaded and warmed up first; then, per repeat
and N, the sides run in a rotating order, so a busy phase of a shared machine hits all of them.
Reported: median seconds of the repeats, items/s, pairs/s (N x (N-1) candidate-sample pairs per
item), ratios against each baseline, and whether the chosen indices agree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]  # the repository
WORKER = ROOT / "benchmarks" / "scripts" / "mbr_bench_worker.py"
DATA = ROOT.parent / "shared" / "data" / "wmt21-de-en"


def pools(data: Path, sizes: List[int], items: int, step: int = 7) -> Dict[int, List[List[str]]]:
    """Per N, ``items`` candidate pools (see the module docstring)."""
    files = sorted(data.glob("hyp.*.en"))
    outputs = [path.read_text(encoding="utf-8").rstrip("\n").split("\n") for path in files]
    segments = len(outputs[0])
    by_segment = [[system[s].strip() for system in outputs] for s in range(segments)]
    out = {}
    for n in sizes:
        out[n] = []
        for k in range(items):
            s, pool = (k * step) % segments, []
            while len(pool) < n:
                pool.extend(by_segment[s])
                s = (s + 1) % segments
            out[n].append(pool[:n])
    return out


class Side:
    def __init__(self, name: str, python: str, model: str, layer: int, threads: int) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(ROOT) if name == "nlgscore" else ""}
        self.process = subprocess.Popen(
            [python, str(WORKER), name, model, str(layer), str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd="/tmp",
        )
        self.ready = self._read()

    def _read(self) -> Dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"side {self.name} died (exit code {self.process.wait()})")
        return json.loads(line)

    def run(self, items: List[List[str]]) -> Dict[str, Any]:
        self.process.stdin.write(json.dumps({"cmd": "run", "items": items}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.process.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
        self.process.stdin.close()
        self.process.wait(60)


def machine() -> Dict[str, str]:
    info = {"python": platform.python_version()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in lscpu.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("Model name", "CPU(s)", "Flags"):
                info[key.strip()] = value.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    info["loadavg"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return info


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8,16,32,64")
    parser.add_argument("--items", type=int, default=32, help="items (source segments) per N")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layer", type=int, default=4)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--sides", default="nlgscore,bert_score,mbrs")
    parser.add_argument("--bert-score-python", default="/tmp/bertscore-venv/bin/python")
    parser.add_argument("--mbrs-python", default="/tmp/mbrs-venv/bin/python")
    parser.add_argument("--json", default=None, help="write the raw report here")
    args = parser.parse_args(argv)

    from nlgscore.backend.models import resolve

    model = resolve("minilm").path
    sizes = [int(n) for n in args.sizes.split(",")]
    data = pools(Path(args.data), sizes, args.items)
    pythons = {"nlgscore": sys.executable, "bert_score": args.bert_score_python, "mbrs": args.mbrs_python}
    names = args.sides.split(",")
    sides = {name: Side(name, pythons[name], model, args.layer, args.threads) for name in names}
    report: Dict[str, Any] = {
        "machine": machine(),
        "model": model,
        "layer": args.layer,
        "threads": args.threads,
        "items": args.items,
        "sides": {n: s.ready for n, s in sides.items()},
        "runs": {},
    }
    try:
        for side in sides.values():  # warm-up: first-call costs out of the timings
            side.run(data[sizes[0]][:2])
        for repeat in range(args.repeats):
            for n in sizes:
                order = names[repeat % len(names) :] + names[: repeat % len(names)]
                for name in order:
                    out = sides[name].run(data[n])
                    out["best_text"] = [pool[b] for pool, b in zip(data[n], out["best"])]
                    report["runs"].setdefault(str(n), {}).setdefault(name, []).append(out)
                    print(f"repeat {repeat} N={n} {name}: {out['seconds']:.2f}s", file=sys.stderr, flush=True)
    finally:
        for side in sides.values():
            side.close()
    report["machine"]["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(table(report, sizes, names))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def table(report: Dict[str, Any], sizes: List[int], names: List[str]) -> str:
    """Markdown rows: per N and side, median seconds, items/s, pairs/s, nlgscore's speed-up (median
    of the per-repeat ratios) and how many chosen candidates are the same text as nlgscore's."""
    items = report["items"]
    lines = [
        "| N | side | seconds (median) | items/s | pairs/s | nlgscore speed-up | CPU seconds (median) | "
        "speed-up in CPU time | same choice as nlgscore |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        runs = report["runs"][str(n)]
        ours = runs.get("nlgscore")
        for name in names:
            sec = statistics.median(r["seconds"] for r in runs[name])
            cpu = statistics.median(r.get("cpu_seconds", float("nan")) for r in runs[name])
            speed = cpu_speed = same = ""
            if ours and name != "nlgscore":
                speed = f"**{statistics.median(a['seconds'] / b['seconds'] for a, b in zip(runs[name], ours)):.2f}x**"
                cpu_speed = f"{statistics.median(a.get('cpu_seconds', 0) / b.get('cpu_seconds', 1) for a, b in zip(runs[name], ours)):.2f}x"
                same = f"{sum(a == b for a, b in zip(runs[name][0]['best_text'], ours[0]['best_text']))}/{items}"
            lines.append(
                f"| {n} | {name} | {sec:.2f} | {items / sec:.2f} | {items * n * (n - 1) / sec:.0f} | {speed} | "
                f"{cpu:.2f} | {cpu_speed} | {same} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
