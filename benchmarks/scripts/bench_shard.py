"""One call split across the ranks of a launch (``shard=True``) against one process, side by side.

    python -m benchmarks bench_shard --data ../shared/data/wmt-kk-en.jsonl --pairs 2000 --repeats 3

Every side scores the same pairs (``better`` against ``ref`` of a WMT DARR file) with the same
scorer, loaded and warmed up before the clock starts; the timed call is one ``compute``:

* ``1 process, T threads``: one process with T intra-op threads (each T of ``--threads``);
* ``N ranks, shard=True``: ``torchrun --nproc_per_node N`` with one thread a rank, the call split
  between the ranks (each encodes its share; every rank gets every score).

It prints one row a side (seconds, best of ``--repeats``; pairs/s; the ratio to one process with
one thread) and whether each side's scores are bit-equal (``==``) to the first side's. ``--json``
writes the rows. The ranks' process group is gloo on CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

HERE = Path(__file__).resolve()


def timed(spec: str, data: str, n: int, repeats: int, shard: bool) -> Dict[str, Any]:
    """Load, warm up, then time ``repeats`` calls: the best seconds and the scores."""
    sys.path.insert(0, str(HERE.parents[2]))  # the checkout's benchmarks package, for the pairs
    import nlgscore
    from benchmarks.harness.data import load_pairs

    pairs = load_pairs(data, n)
    scorer = nlgscore.load(spec)
    scorer.compute(pairs.better[:32], pairs.refs[:32], shard=shard)  # the kernel choice and the first batches
    best, scores = float("inf"), None
    for _ in range(repeats):
        if shard:
            import torch.distributed as dist

            dist.barrier()  # every rank starts the clock together
        start = time.perf_counter()
        scores = scorer.compute(pairs.better, pairs.refs, shard=shard).scores
        best = min(best, time.perf_counter() - start)
    return {"seconds": best, "scores": scores, "signature": str(scorer.signature)}


def worker(args: argparse.Namespace) -> None:
    """One process of a side: writes its timing as JSON (under torchrun: rank 0)."""
    out = timed(args.spec, args.data, args.n, args.repeats, shard=args.shard)
    if not args.shard or int(os.environ.get("RANK", "0")) == 0:
        Path(args.out).write_text(json.dumps(out), encoding="utf-8")


def side(args: argparse.Namespace, label: str, ranks: int, threads: int, folder: Path) -> Dict[str, Any]:
    out = folder / f"{label.replace(' ', '_').replace(',', '')}.json"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), NLGSCORE_THREADS=str(threads), HF_HUB_OFFLINE="1")
    env["TOKENIZERS_PARALLELISM"] = "false"
    own = [str(HERE), "--worker", "--spec", args.spec, "--data", args.data, "--pairs", str(args.n)]
    own += ["--repeats", str(args.repeats), "--out", str(out)]
    if ranks > 1:
        torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
        command = [torchrun, "--standalone", "--nproc_per_node", str(ranks), *own, "--shard"]
    else:
        command = [sys.executable, *own]
    subprocess.run(command, env=env, check=True, timeout=3600)
    row = json.loads(out.read_text(encoding="utf-8"))
    row.update(side=label, ranks=ranks, threads=threads)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data/wmt-kk-en.jsonl")
    parser.add_argument("--pairs", dest="n", type=int, default=2000)
    parser.add_argument("--spec", default="bertscore:minilm:L4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts of the one-process sides")
    parser.add_argument("--json", default=None, help="write the rows to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--shard", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    rows: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for threads in args.threads:
            rows.append(side(args, f"1 process, {threads} thread{'s' if threads > 1 else ''}", 1, threads, Path(tmp)))
        rows.append(side(args, f"{args.ranks} ranks, shard=True", args.ranks, 1, Path(tmp)))
    base = rows[0]
    print(f"{args.spec}, {args.n} pairs of {args.data}, best of {args.repeats}")
    print(f"{'side':28} {'seconds':>8} {'pairs/s':>9} {'vs 1 thread':>12} {'bits':>6}")
    for row in rows:
        same = row["scores"] == base["scores"]
        row["bit_equal"] = same
        print(
            f"{row['side']:28} {row['seconds']:8.2f} {args.n / row['seconds']:9.0f} "
            f"{base['seconds'] / row['seconds']:11.2f}x {'==' if same else 'DIFF':>6}"
        )
    if args.json:
        for row in rows:
            row.pop("scores")
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
