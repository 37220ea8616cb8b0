"""Seconds per BERTScore (minilm) call of 1, 16 and 512 pairs at torch thread counts, one process per setting.

Usage: python -m benchmarks threads_by_size [--rounds N] [--policy passive]
Each setting runs in a fresh process (OMP_WAIT_POLICY is read when OpenMP starts); the settings
alternate round by round so a change of machine load falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
import torch
import nlgscore
threads = int(sys.argv[1]); sizes = [int(s) for s in sys.argv[2].split(",")]; repeats = int(sys.argv[3])
if threads: torch.set_num_threads(threads)
scorer = nlgscore.load("bertscore:minilm")
words = "the a cat dog sat on mat ran fast slow house tree river blue green quickly under over".split()
def sentence(i, n):
    return " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(n))
out = {}
for size in sizes:
    preds = [sentence(i, 12 + i % 9) for i in range(size)]
    refs = [sentence(i + 1, 12 + i % 7) for i in range(size)]
    scorer.compute(preds, refs)  # warm
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); scorer.compute(preds, refs); times.append(time.perf_counter() - t)
    out[size] = sorted(times)[len(times) // 2]
print(json.dumps({"threads": torch.get_num_threads(), "times": out}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1,16,512")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--policies", default="active,passive")
    args = parser.parse_args()
    rows: dict = {}
    for _ in range(args.rounds):
        for policy in args.policies.split(","):
            for threads in args.threads.split(","):
                env = dict(
                    os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_WAIT_POLICY=policy.upper()
                )
                env.pop("OMP_NUM_THREADS", None)
                env.pop("NLGSCORE_THREADS", None)
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, threads, args.sizes, "5"],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                answer = json.loads(done.stdout.strip().splitlines()[-1])
                for size, seconds in answer["times"].items():
                    rows.setdefault((policy, threads, size), []).append(seconds)
    print("| OMP wait policy | threads | pairs | median s (rounds) |")
    print("|---|---|---|---|")
    for (policy, threads, size), values in sorted(
        rows.items(), key=lambda kv: (kv[0][0], int(kv[0][2]), int(kv[0][1]))
    ):
        values = sorted(values)
        print(
            f"| {policy} | {threads} | {size} | {values[len(values) // 2]:.4f} ({', '.join(f'{v:.4f}' for v in values)}) |"
        )


if __name__ == "__main__":
    main()
