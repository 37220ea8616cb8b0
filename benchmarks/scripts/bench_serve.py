"""Benchmarks of the micro-batcher and ``nlgscore serve``; the numbers in BENCHMARKS.md "Serving".

Sections (each figure is printed with the CPU and /proc/loadavg):

* ``throughput``: 1, 8, 64, 256 concurrent single-item clients (``--clients``) against one
  offline ``compute`` of the same items, side by side in alternating rounds (the ratio is what
  counts on a shared machine): in-process (coroutines awaiting a MicroBatcher) and over HTTP (a
  real ``nlgscore serve`` subprocess, aiohttp clients); request latency p50/p99.
* ``latency``: added latency p50/p99 of one sequential client (and of 64 concurrent ones) against
  ``max_wait_ms``: the batcher's latency minus a direct ``compute`` of the same single item.
* ``grpo``: a GRPO-shaped load, B=64 prompts x G=8 rollouts per step, two epochs, with and
  without the reference cache: texts through the encoder (target: <= B*G + B per epoch) and wall
  time against one offline call of the same step.

    python -m benchmarks bench_serve --data ../shared/data/wmt-kk-en.jsonl --n 512 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[2]  # the repository
sys.path.insert(0, str(REPO / "tests"))


def environment() -> Dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
    import torch

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "avx512_bf16": "avx512_bf16" in flags,
        "amx": "amx_tile" in flags,
        "torch_threads": torch.get_num_threads(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }


def pairs(path: str, n: int, distinct: bool = False) -> Tuple[List[str], List[str]]:
    """The first ``n`` (prediction, reference) pairs; ``distinct``: only a prediction's first
    occurrence (RL rollouts are nearly all distinct texts, where WMT system outputs repeat)."""
    preds, refs, seen = [], [], set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if distinct and row["better"]["text"] in seen:
                continue
            seen.add(row["better"]["text"])
            preds.append(row["better"]["text"])
            refs.append(row["ref"])
            if len(preds) == n:
                break
    return preds, refs


async def clients_in_process(
    batcher: Any, preds: List[str], refs: List[str], clients: int
) -> Tuple[float, List[float]]:
    todo = iter(range(len(preds)))
    latencies: List[float] = []

    async def client() -> None:
        for i in todo:
            start = time.perf_counter()
            await batcher.acompute([preds[i]], [refs[i]])
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - start, latencies


async def clients_http(url: str, preds: List[str], refs: List[str], clients: int) -> float:
    """64 client coroutines on aiohttp (lighter than httpx per request: the server is measured, not the client)."""
    import aiohttp

    todo = iter(range(len(preds)))
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=clients)) as http:

        async def client() -> None:
            for i in todo:
                async with http.post("/v1/score", json={"predictions": [preds[i]], "references": [refs[i]]}) as answer:
                    answer.raise_for_status()
                    await answer.read()

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - start


def throughput(
    args: argparse.Namespace, scorer: Any, preds: List[str], refs: List[str], spare: Tuple[List[str], List[str]]
) -> List[Dict[str, Any]]:
    """Per number of clients: offline compute, in-process clients and HTTP clients over the same
    items, side by side in alternating rounds; request latency p50/p99 of the in-process clients.

    With ``--reference-cache`` (the server's default) every pass starts cold: the scorer's cache
    is emptied before the offline call and before the in-process clients, and each round's HTTP
    pass gets a fresh server, warmed up on other pairs (``spare``). So each side encodes a
    reference once per pass, as one offline call does."""
    from servers import ServeProcess

    from nlgscore.serve import MicroBatcher

    flags = (
        "--max-wait-ms",
        str(args.max_wait_ms),
        "--max-items",
        "100000",
        "--max-queue",
        "100000",
        "--reference-cache" if args.reference_cache else "--no-reference-cache",
        "--candidate-cache" if args.candidate_cache else "--no-candidate-cache",
        *(("--threads", str(args.threads)) if args.threads else ()),
    )

    def cold() -> None:
        if args.reference_cache or args.candidate_cache:
            scorer.clear_reference_cache()

    rows = []
    batcher = MicroBatcher(scorer, max_wait_ms=args.max_wait_ms)
    scorer.compute(*spare)
    asyncio.run(clients_in_process(batcher, *spare, 64))  # warm-up of the merged runs' shapes, as for the server
    for clients in args.clients:
        out: Dict[str, Any] = {
            "clients": clients,
            "offline_s": [],
            "in_process_s": [],
            "http_s": [],
            "loadavg": [],
            "latency": [],
        }
        for workers in args.server_workers[1:]:
            out[f"http_s_workers{workers}"] = []
        for _ in range(args.rounds):
            for position, workers in enumerate(args.server_workers):
                # a fresh server per round: its cache starts empty
                with ServeProcess(args.spec, *flags, *(("--workers", str(workers)) if workers > 1 else ())) as server:
                    server.wait_ready(600)
                    asyncio.run(clients_http(server.url, *spare, 64))  # warm-up on other pairs
                    if position == 0:  # the offline and in-process sides once per round, beside the first server
                        out["loadavg"].append(open("/proc/loadavg").read().split()[0])
                        cold()
                        start = time.perf_counter()
                        scorer.compute(preds, refs)
                        out["offline_s"].append(time.perf_counter() - start)
                        cold()
                        seconds, latencies = asyncio.run(clients_in_process(batcher, preds, refs, clients))
                        out["in_process_s"].append(seconds)
                        out["latency"].extend(latencies)
                    key = "http_s" if position == 0 else f"http_s_workers{workers}"
                    out[key].append(asyncio.run(clients_http(server.url, preds, refs, clients)))
                    server.terminate()
        for workers in args.server_workers[1:]:
            ratios = [o / c for o, c in zip(out["offline_s"], out[f"http_s_workers{workers}"])]
            out[f"ratio_http_workers{workers}_rounds"] = ratios
            out[f"ratio_http_workers{workers}_median"] = statistics.median(ratios)
        ratios_in = [o / c for o, c in zip(out["offline_s"], out["in_process_s"])]
        ratios_http = [o / c for o, c in zip(out["offline_s"], out["http_s"])]
        offline_item = statistics.median(out["offline_s"]) / len(preds)  # an item's share of the offline call
        out.update(
            items=len(preds),
            reference_cache=args.reference_cache,
            offline_items_per_s=len(preds) / statistics.median(out["offline_s"]),
            ratio_in_process_median=statistics.median(ratios_in),
            ratio_http_median=statistics.median(ratios_http),
            ratio_in_process_rounds=ratios_in,
            ratio_http_rounds=ratios_http,
            latency_p50_ms=1e3 * _pct(out["latency"], 50),
            latency_p99_ms=1e3 * _pct(out["latency"], 99),
            offline_share_ms=1e3 * offline_item,
            batches=batcher.batches,
        )
        del out["latency"]
        rows.append(out)
        print(json.dumps(out), file=sys.stderr, flush=True)
    batcher.close()
    return rows


def latency(args: argparse.Namespace, scorer: Any, preds: List[str], refs: List[str]) -> List[Dict[str, Any]]:
    """Added latency of one client: each item scored directly and through the batcher back to back
    (paired, so that the shared machine's load hits both alike); 64 clients: latency under load."""
    from nlgscore.serve import MicroBatcher

    n = min(len(preds), args.latency_n)
    rows = []
    for wait in args.waits:
        batcher = MicroBatcher(scorer, max_wait_ms=wait)
        added, direct = [], []

        async def one(i: int, batcher: MicroBatcher = batcher) -> float:
            start = time.perf_counter()
            await batcher.acompute([preds[i]], [refs[i]])
            return time.perf_counter() - start

        for i in range(n):
            start = time.perf_counter()
            scorer.compute([preds[i]], [refs[i]])
            direct.append(time.perf_counter() - start)
            added.append(asyncio.run(one(i)) - direct[-1])
        _, many = asyncio.run(clients_in_process(batcher, preds, refs, 64))
        batcher.close()
        rows.append(
            {
                "max_wait_ms": wait,
                "direct_p50_ms": 1e3 * _pct(direct, 50),
                "one_client_added_p50_ms": 1e3 * _pct(added, 50),
                "one_client_added_p99_ms": 1e3 * _pct(added, 99),
                "clients64_p50_ms": 1e3 * _pct(many, 50),
                "clients64_p99_ms": 1e3 * _pct(many, 99),
                "loadavg": open("/proc/loadavg").read().split()[0],
            }
        )
    return rows


def _pct(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def grpo(args: argparse.Namespace, preds: List[str], refs: List[str]) -> List[Dict[str, Any]]:
    """B prompts x G rollouts per step, each rollout its own call (references shared within a
    group): texts through the encoder and wall time, through the batcher and as one offline call."""
    from nlgscore.registry import load
    from nlgscore.serve import MicroBatcher

    B, G = args.prompts, args.rollouts
    references = list(dict.fromkeys(refs))[:B]
    rows = []
    for cached in (True, False):
        scorer = load(args.spec, cache_references=cached)
        encoded: List[int] = []
        embed = scorer.encoder.embed
        scorer.encoder.embed = lambda batch, embed=embed, encoded=encoded: (encoded.append(len(batch)), embed(batch))[1]
        per_epoch, wall, offline, offline_texts = [], [], [], []
        with MicroBatcher(scorer, max_wait_ms=args.max_wait_ms) as batcher:
            for epoch in range(2):
                rollouts = [
                    f"{preds[(b * G + g) % len(preds)]} (epoch {epoch}, rollout {g})"
                    for b in range(len(references))
                    for g in range(G)
                ]
                labels = [ref for ref in references for _ in range(G)]
                before = sum(encoded)

                async def step(
                    batcher: MicroBatcher = batcher, rollouts: List[str] = rollouts, labels: List[str] = labels
                ) -> None:
                    await asyncio.gather(*(batcher.acompute([r], [ref]) for r, ref in zip(rollouts, labels)))

                start = time.perf_counter()
                asyncio.run(step())
                wall.append(time.perf_counter() - start)
                per_epoch.append(sum(encoded) - before)
                fresh = load(args.spec, cache_references=cached)  # the same step as one offline call, its own cache
                counted: List[int] = []
                inner = fresh.encoder.embed
                fresh.encoder.embed = lambda batch, inner=inner, counted=counted: (
                    counted.append(len(batch)),
                    inner(batch),
                )[1]
                start = time.perf_counter()
                fresh.compute(rollouts, labels)
                offline.append(time.perf_counter() - start)
                offline_texts.append(sum(counted))
        rows.append(
            {
                "cache_references": cached,
                "B": B,
                "G": G,
                "target": B * G + B,
                "texts_encoded_per_epoch": per_epoch,
                "offline_texts": offline_texts,
                "wall_s": wall,
                "offline_s": offline,
                "ratio": [o / w for o, w in zip(offline, wall)],
                "loadavg": open("/proc/loadavg").read().split()[0],
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "wmt-kk-en.jsonl"))
    parser.add_argument("--spec", default="bertscore:minilm")
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64, 256])
    parser.add_argument("--max-wait-ms", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-n", type=int, default=100)
    parser.add_argument("--waits", type=float, nargs="+", default=[0.0, 2.0, 5.0, 20.0, 50.0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--sections", default="throughput,latency,grpo")
    parser.add_argument(
        "--reference-cache",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the reference cache on every side (the server's default), emptied before each pass",
    )
    parser.add_argument(
        "--candidate-cache",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="the candidate cache on every side (the server's --candidate-cache), emptied before each pass",
    )
    parser.add_argument(
        "--freeze-heap",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="nlgscore.serve.freeze_heap() in this process once the scorer is loaded (the server always does)",
    )
    parser.add_argument(
        "--distinct-predictions",
        action="store_true",
        help="no prediction text twice (the RL shape; WMT system outputs repeat: 218 distinct among the first 512)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads, in this process and the server's --threads (default: each one's own)",
    )
    parser.add_argument(
        "--server-workers",
        type=int,
        nargs="+",
        default=[1],
        help="the HTTP side's --workers, each its own server in every round (the first is the one-process ratio's)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from nlgscore.registry import load

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    preds, refs = pairs(
        args.data, args.n + 4000 if not args.distinct_predictions else 2 * args.n, args.distinct_predictions
    )
    # warm-up pairs: as many later ones, whose references are not measured (a warm cache would flatter a side); a
    # fresh server is warmed with all of them from 64 clients, as it is after its first minute of serving (its
    # kernels made for the row counts such runs have: oneDNN makes one per new shape, 0.2-0.8 ms each)
    measured = set(refs[: args.n]) | set(preds[: args.n])  # no warm-up text is measured (a server's cache starts cold)
    spare_pairs = [(p, r) for p, r in zip(preds[args.n :], refs[args.n :]) if r not in measured and p not in measured][
        : args.n
    ]
    spare = ([p for p, _ in spare_pairs], [r for _, r in spare_pairs])
    preds, refs = preds[: args.n], refs[: args.n]
    scorer = load(args.spec, cache_references=args.reference_cache, cache_candidates=args.candidate_cache)
    if args.freeze_heap:  # as nlgscore serve does once loaded (the offline call runs in this process too)
        from nlgscore.serve import freeze_heap

        freeze_heap()
    report: Dict[str, Any] = {"environment": environment(), "command": " ".join(sys.argv)}
    sections = args.sections.split(",")
    if "throughput" in sections:
        report["throughput"] = throughput(args, scorer, preds, refs, spare)
    if "latency" in sections:
        report["latency"] = latency(args, scorer, preds, refs)
    if "grpo" in sections:
        report["grpo"] = grpo(args, preds, refs)
    report["environment"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
