"""BERTScore wall time with each CPU linear kernel: the automatic choice, MKL forced, oneDNN forced.

nlgscore picks the CPU linear kernel by timing both on the model's shapes when it loads a model
(``nlgscore.backend.gemm``); this script checks the choice end to end on WMT pairs. Each setting runs
in its own process (``NLGSCORE_ONEDNN`` is read at load time), the settings alternate over the
repeats so that a busy phase of a shared machine hits all of them, and the median is reported
with the CPU model and the kernel each process chose.

    python -m benchmarks bench_kernels --data ../shared/data/wmt-kk-en.jsonl --n 2000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

SETTINGS = {"automatic": None, "MKL forced": "0", "oneDNN forced": "1"}

WORKER = r"""
import json, sys, time
from nlgscore.backend import gemm
from nlgscore.meta.data.loaders import load_darr
import nlgscore
darr = load_darr(sys.argv[1]); n = int(sys.argv[2])
cands, refs = darr.better[:n], darr.ref[:n]
scorer = nlgscore.load("bertscore:minilm:L4")
scorer.compute(cands[:64], refs[:64])  # warm-up
start = time.perf_counter()
result = scorer.compute(cands, refs)
print(json.dumps({"seconds": time.perf_counter() - start, "score": result.score, **gemm.kernel_choice()}))
"""


def run_once(data: str, n: int, forced: str | None) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.pop("NLGSCORE_ONEDNN", None)
    if forced is not None:
        env["NLGSCORE_ONEDNN"] = forced
    out = subprocess.run(
        [sys.executable, "-c", WORKER, data, str(n)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="WMT daRR JSONL file (cand = better.text, ref = ref)")
    parser.add_argument("--n", type=int, default=2000, help="pairs (default 2000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (default 3)")
    args = parser.parse_args()
    runs: dict = {name: [] for name in SETTINGS}
    for _ in range(args.repeats):
        for name, forced in SETTINGS.items():
            runs[name].append(run_once(args.data, args.n, forced))
    cpu = runs["automatic"][0]["cpu"]
    load = os.getloadavg()[0]
    print(
        f"CPU: {cpu}; {os.cpu_count()} cores; load average at the end {load:.1f}; "
        f"{args.n} pairs, MiniLM layer 4, fp32, median of {args.repeats} runs each"
    )
    print("\n| setting | kernel used | wall time (s) | system F1 |\n|---|---|---|---|")
    for name, samples in runs.items():
        kernels = sorted({s["kernel"] for s in samples})
        seconds = statistics.median(s["seconds"] for s in samples)
        print(f"| {name} | {', '.join(kernels)} | {seconds:.2f} | {samples[0]['score']:.10f} |")
    probe = runs["automatic"][0]
    if probe.get("reason") == "measured":
        print(
            f"\nLoad-time probe of the automatic runs: oneDNN {probe['onednn_ms']:.1f} ms vs MKL {probe['mkl_ms']:.1f} ms "
            f"on MiniLM's linear shapes -> {probe['kernel']}"
        )


if __name__ == "__main__":
    main()
