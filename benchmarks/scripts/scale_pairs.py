"""Write N (candidate, reference) pairs built from the WMT data in ../shared/data, for the scale benchmark.

    python -m benchmarks scale_pairs --data ../shared/data --n 1000000 --out /tmp/scale/1m

writes ``OUT.cands`` and ``OUT.refs`` (one segment a line). The pool is every real (system
output, reference) pair of WMT19 kk-en and gu-en (daRR: better and worse) and WMT21 de-en (every
system against reference A); N pairs are drawn from it with replacement in a seeded random order,
so the file is a reshuffle of real MT pairs (the data are read at run time, never committed).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import List, Tuple


def pool(data: Path) -> List[Tuple[str, str]]:
    pairs: List[Tuple[str, str]] = []
    for name in ("wmt-kk-en.jsonl", "wmt-gu-en.jsonl"):
        with open(data / name, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                for side in ("better", "worse"):
                    text = (row.get(side) or {}).get("text") or ""
                    if text.strip() and (row.get("ref") or "").strip():
                        pairs.append((text, row["ref"]))
    wmt21 = data / "wmt21-de-en"
    refs = (wmt21 / "ref.A.en").read_text(encoding="utf-8").split("\n")
    for hyp_file in sorted(wmt21.glob("hyp.*.en")):
        for hyp, ref in zip(hyp_file.read_text(encoding="utf-8").split("\n"), refs):
            if hyp.strip() and ref.strip():
                pairs.append((hyp, ref))
    return sorted(set(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--out", required=True, help="prefix: writes PREFIX.cands and PREFIX.refs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pairs = pool(args.data)
    rng = random.Random(args.seed)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with (
        open(f"{args.out}.cands", "w", encoding="utf-8") as cands,
        open(f"{args.out}.refs", "w", encoding="utf-8") as refs,
    ):
        for _ in range(args.n):
            cand, ref = pairs[rng.randrange(len(pairs))]
            cands.write(cand.replace("\n", " ") + "\n")
            refs.write(ref.replace("\n", " ") + "\n")
    print(f"{args.n} pairs from a pool of {len(pairs)} distinct pairs -> {args.out}.cands/.refs")


if __name__ == "__main__":
    main()
