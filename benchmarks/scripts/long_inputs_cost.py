#!/usr/bin/env python
"""Cost of BERTScore on long inputs: time and peak memory for 1k-, 10k- and 100k-token texts.

    python -m benchmarks long_inputs_cost --data ../shared/data/sum-summeval.jsonl [--sizes 1000 10000 100000]

Each size runs in a fresh process (peak RSS = that process's high-water mark, model included):
a 60-word summary scored against a reference of N MiniLM tokens (SummEval sources laid end to
end), ``long_inputs="auto"`` (windows of 512, stride 255) and ``"truncate"`` side by side, and
``auto`` with the same text as candidate AND reference (an N x N pair, matched in blocks; up to
10k tokens). Also
printed: tokens the encoder ran over divided by the text's tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time


def one(size: int, mode: str, data: str, both_long: bool) -> dict:
    from nlgscore.bertscore import BERTScorer

    texts = [json.loads(line)["src"] for line in open(data, encoding="utf-8")]
    scorer = BERTScorer(model_type="minilm", num_layers=4, long_inputs=mode)
    words, ids = [], []
    while True:  # whole sources until the text has `size` content tokens, then cut to exactly size
        words.append(texts[len(words) % len(texts)])
        ids = scorer.encoder.tokenize([" ".join(words)], truncate=False)[0][0]
        if len(ids) - 2 >= size:
            break
    content = ids[1:-1][:size]
    text = scorer.encoder.tokenizer.decode(content)
    tokens = len(scorer.encoder.tokenize([text], truncate=False)[0][0])
    summary = " ".join(texts[3].split()[:60])
    scorer.compute([summary], [texts[0]])  # warm-up: first-call kernel set-up is not the input's cost
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = scorer.compute([text if both_long else summary], [text])
    seconds = time.perf_counter() - start
    plan = scorer._window_plan(scorer.encoder.tokenize([text], truncate=mode == "truncate")[0][0])
    encoded = sum(len(w) for w in plan.windows) if plan is not None else min(tokens, 512)
    return {
        "size": size,
        "tokens": tokens,
        "mode": mode,
        "both_long": both_long,
        "seconds": seconds,
        "f1": result.f1[0],
        "windows": result.windows[0],
        "encoded_over_tokens": encoded / tokens,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_after_load_mib": rss_loaded / 1024,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data/sum-summeval.jsonl")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one(int(args.child[0]), args.child[1], args.data, args.child[2] == "1")))
        return 0
    rows = []
    for size in args.sizes:
        for mode, both in (("truncate", False), ("auto", False), ("auto", True)):
            if both and size > 10_000:  # an N x N pair is N^2 x hidden multiply-adds: 3.8 TFLOP at 100k
                continue
            run = subprocess.run(
                [sys.executable, __file__, "--data", args.data, "--child", str(size), mode, "1" if both else "0"],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(run.stdout.strip().splitlines()[-1]))
            rows[-1]["loadavg"] = open("/proc/loadavg").read().split()[0]
            print(json.dumps(rows[-1]), flush=True)
    print(json.dumps({"cpu_count": os.cpu_count(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
