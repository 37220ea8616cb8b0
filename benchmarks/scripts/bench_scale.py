"""The "scale" benchmark of BENCHMARKS.md: the CLI on growing corpora, resuming after a kill, Ray Data.

    python -m benchmarks scale_pairs --n 10000 --out /tmp/scale/p10000     # and 100000, 1000000
    python -m benchmarks bench_scale cli --pairs /tmp/scale/p10000 --json /tmp/scale/cli-10k.json
    python -m benchmarks bench_scale resume --pairs /tmp/scale/p4000 --window 512 --json /tmp/scale/resume.json
    python -m benchmarks bench_scale ray --pairs /tmp/scale/p2000 --json /tmp/scale/ray.json

``cli`` runs ``nlgscore score bertscore:minilm -c P.cands -r P.refs -o OUT.tsv`` under
``/usr/bin/time -v`` (peak RSS of the process) and times the scoring from the moment the
checkpoint appears (the model is loaded by then) to the end. ``resume`` runs the same command
three times with a small window: uninterrupted, then killed with SIGKILL once half the rows are
checkpointed, then resumed; it reports the wall times and whether the resumed output is
byte-identical. ``ray`` scores the pairs with ``nlgscore.integrations.ray.score_dataset`` on a
local Ray instance with 1 and then 2 actors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
SPEC = "bertscore:minilm"


def _command(pairs: str, out: Path, window: int = 0) -> List[str]:
    cmd = [
        sys.executable,
        "-m",
        "nlgscore",
        "score",
        SPEC,
        "-c",
        f"{pairs}.cands",
        "-r",
        f"{pairs}.refs",
        "-o",
        str(out),
        "--no-progress",
    ]
    return cmd + (["--window", str(window)] if window else [])


def _checkpoint(out: Path) -> Dict[str, Any]:
    try:
        return json.loads(out.with_name(out.name + ".ckpt.json").read_text())
    except (OSError, ValueError):
        return {}


def cli_run(pairs: str, out: Path, window: int = 0, kill_at: int = 0) -> Dict[str, Any]:
    """One CLI run; ``kill_at`` > 0: SIGKILL once that many rows are checkpointed."""
    time_file = out.with_suffix(".time")
    start = time.monotonic()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-v", "-o", str(time_file), *_command(pairs, out, window)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    scoring_from = None
    while proc.poll() is None:
        state = _checkpoint(out)
        if state and scoring_from is None:
            scoring_from = time.monotonic()
        if kill_at and state.get("done", 0) >= kill_at:
            for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
                os.kill(int(child), signal.SIGKILL)  # the scorer under /usr/bin/time, which then exits
            break
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    end = time.monotonic()
    report: Dict[str, Any] = {
        "wall_s": round(end - start, 2),
        "returncode": proc.returncode,
        "done": _checkpoint(out).get("done"),
    }
    if scoring_from is not None:
        report["scoring_s"] = round(end - scoring_from, 2)
    if time_file.exists():
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_file.read_text())
        report["peak_rss_mib"] = round(int(match.group(1)) / 1024) if match else None
    report["stdout"] = stdout.strip()[-300:]
    if proc.returncode not in (0, -9) and not kill_at:
        report["stderr"] = stderr[-2000:]
    return report


def cmd_cli(args: argparse.Namespace) -> Dict[str, Any]:
    n = sum(1 for _ in open(f"{args.pairs}.cands", encoding="utf-8"))
    out = Path(args.workdir) / f"cli-{n}.tsv"
    report = cli_run(args.pairs, out, args.window)
    report.update(pairs=n, window=args.window or "default")
    if report.get("scoring_s"):
        report["pairs_per_s"] = round(n / report["scoring_s"], 1)
    return report


def cmd_resume(args: argparse.Namespace) -> Dict[str, Any]:
    n = sum(1 for _ in open(f"{args.pairs}.cands", encoding="utf-8"))
    work = Path(args.workdir)
    full = cli_run(args.pairs, work / "resume-full.tsv", args.window)
    out = work / "resume.tsv"
    killed = cli_run(args.pairs, out, args.window, kill_at=n // 2)
    resumed = cli_run(args.pairs, out, args.window)
    same = out.exists() and out.read_bytes() == (work / "resume-full.tsv").read_bytes()
    return {
        "pairs": n,
        "window": args.window,
        "uninterrupted": full,
        "killed": killed,
        "resumed": resumed,
        "byte_identical": same,
        "extra_wall_s": round(killed["wall_s"] + resumed["wall_s"] - full["wall_s"], 2),
    }


def cmd_ray(args: argparse.Namespace) -> Dict[str, Any]:
    import ray

    from nlgscore.integrations.ray import score_dataset

    cands = Path(f"{args.pairs}.cands").read_text(encoding="utf-8").splitlines()
    refs = Path(f"{args.pairs}.refs").read_text(encoding="utf-8").splitlines()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}},
    )
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    rows = [{"prediction": c, "reference": r} for c, r in zip(cands, refs)]
    report: Dict[str, Any] = {"pairs": len(rows)}
    for actors in (1, 2):
        start = time.monotonic()
        scored = score_dataset(
            ray.data.from_items(rows), SPEC, concurrency=actors, batch_size=args.batch_size
        ).take_all()
        wall = time.monotonic() - start
        assert len(scored) == len(rows)
        report[f"{actors}_actors"] = {"wall_s": round(wall, 2), "pairs_per_s": round(len(rows) / wall, 1)}
    ray.shutdown()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("cli", "resume", "ray"))
    parser.add_argument(
        "--pairs", required=True, help="prefix of PREFIX.cands / PREFIX.refs (benchmarks/scripts/scale_pairs.py)"
    )
    parser.add_argument("--window", type=int, default=0, help="--window of the CLI (0: its default)")
    parser.add_argument("--batch-size", type=int, default=512, help="Ray batch size")
    parser.add_argument("--workdir", default="/tmp/scale")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    report = {"cli": cmd_cli, "resume": cmd_resume, "ray": cmd_ray}[args.what](args)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
