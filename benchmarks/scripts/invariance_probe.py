"""Batch-invariance probe: does an item's score depend on what else its call holds?

Scores WMT19 kk-en pairs (``../shared/data/wmt-kk-en.jsonl``, read at run time) in one call, then
each item alone, in shuffled batches of 7, under ``max_tokens=256``, beside one long text, and
through ``acompute``, and counts the scores that differ from the one-call score by any bit, per
metric and dtype (BENCHMARKS.md "Batch invariance"). Run it once per kernel::

    NLGSCORE_ONEDNN=0 python -m benchmarks invariance_probe --items 254
    NLGSCORE_ONEDNN=1 python -m benchmarks invariance_probe --items 254

Exit status 1 when any score moved (so it doubles as a check). ``--save FILE`` writes the one-call
scores, and ``--compare FILE`` prints the largest difference from a file saved under the other
kernel (the cross-kernel bound the README states).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]  # the repository
DATA = ROOT.parent / "shared" / "data" / "wmt-kk-en.jsonl"
GOLDEN = ROOT / "tests" / "golden"


def read_pairs(limit: int) -> Tuple[List[str], List[str]]:
    """Candidates and references: better and worse outputs, plus perfect matches and duplicates."""
    cands, refs = [], []
    with open(DATA, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            for side in ("better", "worse"):
                cands.append(row[side]["text"])
                refs.append(row["ref"])
            if len(cands) >= limit:
                break
    cands, refs = cands[:limit], refs[:limit]
    for i in range(0, min(len(refs), 8 * 17), 17):  # perfect matches
        cands[i] = refs[i]
    for i in range(6):  # duplicates of earlier pairs
        cands.append(cands[3 * i + 1])
        refs.append(refs[3 * i + 1])
    return cands, refs


def build(metric: str, dtype: str) -> Any:
    if metric == "bertscore":
        from nlgscore import BERTScorer

        return BERTScorer(model_type="minilm", num_layers=4, dtype=dtype)
    if metric == "prism":
        from nlgscore import PrismScorer

        return PrismScorer(str(GOLDEN / "tiny-prism"), lang="en", dtype=dtype)
    from nlgscore import BARTScorer

    return BARTScorer(checkpoint=str(GOLDEN / "tiny-bart"), device="cpu", dtype=dtype)


def scenarios(
    scorer: Any, cands: Sequence[str], refs: Sequence[str], long_text: str, seed: int
) -> Dict[str, Callable[[], List[float]]]:
    n = len(cands)

    def alone() -> List[float]:
        return [scorer.compute([cands[i]], [refs[i]]).scores[0] for i in range(n)]

    def shuffled() -> List[float]:
        order = list(range(n))
        random.Random(seed).shuffle(order)
        out = [0.0] * n
        for start in range(0, n, 7):
            chunk = order[start : start + 7]
            for i, s in zip(chunk, scorer.compute([cands[i] for i in chunk], [refs[i] for i in chunk]).scores):
                out[i] = s
        return out

    def budget() -> List[float]:
        return list(scorer.compute(list(cands), list(refs), max_tokens=256).scores)

    def beside_long() -> List[float]:
        out = []
        for start in range(0, n, 16):
            chunk = list(range(start, min(n, start + 16)))
            scores = scorer.compute(
                [cands[i] for i in chunk] + [long_text], [refs[i] for i in chunk] + [refs[0]]
            ).scores
            out.extend(scores[: len(chunk)])
        return out

    def acompute() -> List[float]:
        async def run() -> List[float]:
            results = await asyncio.gather(*(scorer.acompute([cands[i]], [refs[i]]) for i in range(n)))
            return [r.scores[0] for r in results]

        return asyncio.run(run())

    return {
        "alone": alone,
        "shuffled-7": shuffled,
        "max_tokens=256": budget,
        "beside-long": beside_long,
        "acompute": acompute,
    }


def probe(metric: str, dtype: str, cands: Sequence[str], refs: Sequence[str], seed: int) -> Dict[str, Any]:
    scorer = build(metric, dtype)
    long_text = " ".join(refs[:40])  # a few hundred words: beyond MiniLM's 512 tokens
    base = list(scorer.compute(list(cands), list(refs)).scores)
    moved, largest, per = 0, 0.0, {}
    for name, run in scenarios(scorer, cands, refs, long_text, seed).items():
        got = run()
        diffs = [abs(a - b) for a, b in zip(got, base) if a != b]
        per[name] = len(diffs)
        moved += len(diffs)
        largest = max([largest, *diffs])
    return {
        "base": base,
        "metric": metric,
        "dtype": dtype,
        "compared": len(base) * len(per),
        "moved": moved,
        "largest": largest,
        "per_scenario": per,
    }


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=254)
    parser.add_argument("--metrics", default="bertscore,prism,bartscore")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="write the one-call scores here (JSON)")
    parser.add_argument("--compare", help="a --save file from another kernel: print the largest difference")
    parser.add_argument("--one-call", action="store_true", help="only the one-call scores (with --save/--compare)")
    args = parser.parse_args(list(argv) or None)
    if not DATA.is_file():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    cands, refs = read_pairs(args.items)
    print(f"NLGSCORE_ONEDNN={os.environ.get('NLGSCORE_ONEDNN', '(default)')}, {len(cands)} pairs")
    any_moved = False
    saved = {}
    for metric in args.metrics.split(","):
        for dtype in args.dtypes.split(","):
            if args.one_call:
                saved[f"{metric}/{dtype}"] = list(build(metric, dtype).compute(cands, refs).scores)
                continue
            row = probe(metric, dtype, cands, refs, args.seed)
            saved[f"{metric}/{dtype}"] = row["base"]
            any_moved |= row["moved"] > 0
            print(
                f"| {metric} / {dtype} | {row['moved']} of {row['compared']} | {row['largest']:.2g} | {row['per_scenario']}",
                flush=True,
            )
    if args.save:
        Path(args.save).write_text(json.dumps(saved), encoding="utf-8")
    if args.compare:
        other = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        for key, scores in saved.items():
            diffs = [abs(a - b) for a, b in zip(scores, other[key])]
            print(f"{key}: {sum(d > 0 for d in diffs)} of {len(diffs)} differ across kernels, largest {max(diffs):.2g}")
    return 1 if any_moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
