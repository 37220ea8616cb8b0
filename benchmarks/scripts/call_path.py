"""Host cost of a call, per item: what checks, tokenizing, scheduling and result splitting cost
when the model costs nearly nothing; the numbers in BENCHMARKS.md, "Host cost of a call".

Two scorers whose model work is close to zero:

* ``tiny``: BERTScore on MiniLM's tokenizer with a one-layer, 8-wide BERT built here (random
  weights, saved to a temporary folder): the real tokenizer, encoder code, matching and Result;
* ``null``: a scorer of the package's template (``nlgscore.core.base.Scorer``) whose items score a
  constant: argument checks, items, de-duplication, aggregation, signature and Result only.

Paths, each for runs of ``--sizes`` items (3-word texts, every item distinct):

* ``compute``: one offline ``compute`` call of N items;
* ``matrix``: one ``matrix`` call of N cells (N/8 predictions x 8 references; 1 x 1 for N = 1);
* ``merged``: the micro-batcher's work for a run of N single-item calls, on this thread: N
  ``make_call``, ``Call.concat``, one ``run`` and ``Result.split`` (no threads, no waiting);
* ``acompute``: N concurrent coroutines, one item each, through ``scorer.acompute`` (the
  micro-batcher): a run of N single-item calls.

Each figure is the median over ``--repeats`` of wall time (``perf_counter_ns``) and of this
process's CPU time (``process_time_ns``, both threads of the micro-batcher included), per item.
``--profile FILE`` writes cProfile's top functions of one path/size to FILE.

    python -m benchmarks call_path --sizes 1,64,512 --repeats 7 --json out/call-path.json
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import statistics
import tempfile
import time
from typing import Any, Dict, List, Tuple

import numpy as np

WORDS = "the cat sat on a mat dog ran far away red blue green sea sky old new big small cold warm day night".split()
PATHS = ("compute", "matrix", "merged", "acompute")
SCORERS = ("tiny", "null")
# One event loop for every acompute run, as a long-lived client has (a new loop per run would be
# timed too: asyncio.run's set-up costs about a millisecond).
_LOOP = asyncio.new_event_loop()


def texts(n: int, seed: int) -> List[str]:
    """``n`` distinct 3-word texts."""
    w = len(WORDS)
    return [
        f"{WORDS[(i + seed) % w]} {WORDS[(i // w + 2 * seed + 1) % w]} {WORDS[(i // (w * w) + 3 * seed + 2) % w]}"
        for i in range(n)
    ]


def environment() -> Dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "").split()
    import torch

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "flags": [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if f in flags],
        "torch_threads": torch.get_num_threads(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }


def tiny_bertscore(folder: str) -> Any:
    """BERTScore with MiniLM's tokenizer and a one-layer BERT of width 8 (seeded random weights)."""
    import torch
    from transformers import BertConfig, BertModel

    from nlgscore.registry import build

    minilm = build("bertscore:minilm", num_layers=1)
    minilm.encoder.tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=minilm.encoder.vocab_size,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(folder)
    return build("bertscore", model_type=folder, num_layers=1)


def null_scorer() -> Any:
    """A template scorer whose model work is nothing: every item scores 1.0."""
    from nlgscore.core.base import Scorer
    from nlgscore.core.result import Result

    class Null(Scorer):
        name = "null"
        columns = ("score",)

        def _score_items(self, items: List[Any], state: Any) -> Dict[str, np.ndarray]:
            return {"score": np.ones(len(items))}

        def _finish(self, call: Any, columns: Dict[str, np.ndarray]) -> Result:
            return Result(self.make_signature(call), columns, "score")

        def _signature_fields(self, call: Any) -> Dict[str, Any]:
            return {"model": "none"}

    return Null()


def run_path(scorer: Any, path: str, preds: List[str], refs: List[str]) -> int:
    """Score the items ``zip(preds, refs)`` by ``path``; the number of scores that are finite."""
    n = len(preds)
    if path == "compute":
        return int(np.isfinite(scorer.compute(preds, refs).scores).sum())
    if path == "matrix":
        rows, cols = max(1, n // 8), min(n, 8)
        return int(np.isfinite(scorer.matrix(preds[:rows], refs[:cols])).sum())
    if path == "merged":
        from nlgscore.core.call import Call

        calls = [scorer.make_call([p], [r]) for p, r in zip(preds, refs, strict=True)]
        parts = scorer.run(Call.concat(calls)).split([call.size for call in calls])
        return sum(int(np.isfinite(part.scores).sum()) for part in parts)
    if path == "acompute":

        async def clients() -> List[Any]:
            return await asyncio.gather(*(scorer.acompute([p], [r]) for p, r in zip(preds, refs, strict=True)))

        return sum(int(np.isfinite(result.scores).sum()) for result in _LOOP.run_until_complete(clients()))
    raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")


def measure(scorer: Any, path: str, n: int, repeats: int) -> Tuple[float, float, int]:
    """Median wall and CPU µs per item of runs of ``n`` items over ``repeats`` runs (after one
    untimed run: the batcher's threads, the tokenizer's caches), and the items scored in each."""
    preds, refs = texts(n, 0), texts(n, 1)
    run_path(scorer, path, preds, refs)
    walls, cpus, scored = [], [], []
    for _ in range(repeats):
        cpu0, wall0 = time.process_time_ns(), time.perf_counter_ns()
        scored.append(run_path(scorer, path, preds, refs))
        walls.append(time.perf_counter_ns() - wall0)
        cpus.append(time.process_time_ns() - cpu0)
    if len(set(scored)) != 1:
        raise RuntimeError(f"runs scored different item counts: {scored}")
    return statistics.median(walls) / 1e3 / n, statistics.median(cpus) / 1e3 / n, scored[0]


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,64,512", help="run sizes, comma-separated (default 1,64,512)")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"of {', '.join(PATHS)} (default all)")
    parser.add_argument("--scorers", default=",".join(SCORERS), help=f"of {', '.join(SCORERS)} (default all)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure; the median is kept (default 5)")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--profile", help="write cProfile's top functions of --profile-case here")
    parser.add_argument(
        "--profile-case", default="tiny:acompute:64", help="SCORER:PATH:N profiled (default tiny:acompute:64)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    paths, names = args.paths.split(","), args.scorers.split(",")
    for path in paths:
        if path not in PATHS:
            parser.error(f"--paths: each must be one of {', '.join(PATHS)}, got {path!r}")
    for name in names:
        if name not in SCORERS:
            parser.error(f"--scorers: each must be one of {', '.join(SCORERS)}, got {name!r}")
    if any(n < 1 for n in sizes) or args.repeats < 1:
        parser.error("--sizes and --repeats must be positive")
    with tempfile.TemporaryDirectory() as folder:
        scorers = {name: tiny_bertscore(folder) if name == "tiny" else null_scorer() for name in names}
        report: Dict[str, Any] = {"environment": environment(), "repeats": args.repeats, "rows": []}
        for name, scorer in scorers.items():
            for path in paths:
                for n in sizes:
                    wall, cpu, scored = measure(scorer, path, n, args.repeats)
                    expected = n if path != "matrix" else max(1, n // 8) * min(n, 8)
                    report["rows"].append(
                        {
                            "scorer": name,
                            "path": path,
                            "items": n,
                            "scored": scored,
                            "expected": expected,
                            "wall_us_per_item": round(wall, 2),
                            "cpu_us_per_item": round(cpu, 2),
                        }
                    )
                    print(
                        f"{name:5s} {path:9s} {n:4d} items: {wall:9.1f} µs/item wall, {cpu:9.1f} µs/item CPU ({scored}/{expected} scored)"
                    )
        if args.profile:
            name, path, n = args.profile_case.split(":")
            profiler = cProfile.Profile()
            profiler.runcall(run_path, scorers[name], path, texts(int(n), 0), texts(int(n), 1))
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
            with open(args.profile, "w", encoding="utf-8") as handle:
                handle.write(out.getvalue())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return 0 if all(row["scored"] == row["expected"] for row in report["rows"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
