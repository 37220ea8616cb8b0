"""Cost of long inputs for Prism and BARTScore: time and peak memory, auto vs truncate.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks bench_long_seq2seq [--sizes 1000 10000 100000]

Each metric runs in a fresh process that loads its tiny checkpoint of tests/golden once (their
real limits: 1,024 positions) and scores, per (side, size, setting), a text of ``size`` model
tokens built from seeded random sentences as the source (against a 20-token target), as the
target (against a 20-token source), or both. Reported: the best of ``--repeats`` timed calls, the
peak RSS of the calls over the RSS before them (the kernel's high-water mark, reset through
/proc/self/clear_refs before each setting), the chunk pairs (``result.windows``) and the
encoder/decoder tokens fed to the model relative to the text's. Printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
WORDS = (
    "time people year way day man thing woman life child world school state family student group country problem hand "
    "part place case week company system program question work government number night point home water room mother area "
    "money story fact month lot right study book eye job word business issue side kind head house service friend father "
    "power hour game line end member law car city community name president team minute idea kid body information back"
).split()


def sentences(seed: int):
    rng = random.Random(seed)
    while True:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
        yield " ".join(words).capitalize() + "."


def text_of(count, size: int, seed: int) -> str:
    out, gen, total = [], sentences(seed), 0
    while total < size:  # sentence by sentence (within a text a sentence may take a token more or less)
        out.append(next(gen))
        total += count(" " + out[-1])
    return " ".join(out)


def memory_mib(field: str) -> float:
    """VmRSS or VmHWM of this process, MiB."""
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith(field + ":"))
    return int(line.split()[1]) / 1024


def run_metric(metric: str, configs: list, repeats: int) -> list:
    import torch

    torch.set_num_threads(1)
    scorers = {}
    for setting in ("truncate", "auto"):
        if metric == "prism":
            from nlgscore.seq2seq.prism import PrismScorer

            scorers[setting] = PrismScorer(str(ROOT / "tests/golden/tiny-prism"), long_inputs=setting)
        else:
            from nlgscore.seq2seq.bartscore import BARTScorer

            scorers[setting] = BARTScorer(checkpoint=str(ROOT / "tests/golden/tiny-bart"), long_inputs=setting)
    return [one(metric, scorers[setting], side, size, setting, repeats) for side, size, setting in configs]


def one(metric: str, scorer, side: str, size: int, setting: str, repeats: int) -> dict:
    import warnings

    if metric == "prism":
        count = lambda t: len(scorer.tokenizer.encode([t])[0])  # noqa: E731
        run = lambda p, s: scorer.compute([p], sources=[s])  # noqa: E731
        model = scorer._loaded.model
    else:
        count = lambda t: len(scorer.tokenizer(t, add_special_tokens=False, verbose=False)["input_ids"])  # noqa: E731
        run = lambda p, s: scorer.compute([p], sources=[s], direction="src")  # noqa: E731
        model = scorer.model
    short = text_of(count, 20, 1)
    long_source, long_target = text_of(count, size, 2), text_of(count, size, 3)
    source = long_source if side in ("source", "both") else short
    target = long_target if side in ("target", "both") else short
    fed = {"encoder": 0, "decoder": 0}
    hooks = [
        model.get_encoder().register_forward_pre_hook(
            lambda m, a, k: fed.__setitem__("encoder", fed["encoder"] + int(k["attention_mask"].sum())),
            with_kwargs=True,
        ),
        model.model.decoder.register_forward_pre_hook(
            lambda m, a, k: fed.__setitem__("decoder", fed["decoder"] + int((k["input_ids"] != 1).sum())),
            with_kwargs=True,
        ),
    ]
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # reset the peak RSS to the current RSS
    before = memory_mib("VmRSS")
    times = []
    for _ in range(repeats):
        fed.update(encoder=0, decoder=0)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run(target, source)
        times.append(time.perf_counter() - start)
    peak = memory_mib("VmHWM")
    for hook in hooks:
        hook.remove()
    return {
        "metric": metric,
        "side": side,
        "size": size,
        "setting": setting,
        "seconds": min(times),
        "peak_mib": peak - before,
        "windows": result.windows[0],
        "score": result.score,
        "source_tokens": count(source),
        "target_tokens": count(target),
        **fed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--metric", default=None, help=argparse.SUPPRESS)  # the worker process of one metric
    args = parser.parse_args()
    configs = [
        (side, size, setting)
        for side in ("source", "target", "both")
        for size in args.sizes
        for setting in ("truncate", "auto")
        if not (side == "both" and size > 10000)
    ]  # chunks x pieces: 100 x 100 pairs of 1k tokens at 100k
    if args.metric:
        print(json.dumps(run_metric(args.metric, configs, args.repeats)))
        return
    rows = []
    for metric in ("prism", "bartscore"):
        cmd = [
            sys.executable,
            __file__,
            "--repeats",
            str(args.repeats),
            "--metric",
            metric,
            "--sizes",
            *map(str, args.sizes),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
        rows += json.loads(done.stdout.splitlines()[-1])
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    print(f"load average before/after: {' '.join(load)}\n")
    print(
        "| metric | long side | tokens | setting | time s | auto/truncate | peak MiB over the model | chunk pairs | "
        "encoder tokens fed / text | decoder tokens fed / target |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        base = next(
            r
            for r in rows
            if (r["metric"], r["side"], r["size"], r["setting"])
            == (row["metric"], row["side"], row["size"], "truncate")
        )
        ratio = f"{row['seconds'] / base['seconds']:.2f}x" if row["setting"] == "auto" else ""
        print(
            f"| {row['metric']} | {row['side']} | {row['size']:,} | {row['setting']} | {row['seconds']:.3f} | "
            f"{ratio} | {row['peak_mib']:.0f} | "
            f"{row['windows']} | {row['encoder'] / (row['source_tokens'] + 2):.2f} | {row['decoder'] / (row['target_tokens'] + 2):.2f} |"
        )


if __name__ == "__main__":
    main()
