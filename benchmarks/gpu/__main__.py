"""``python -m benchmarks.gpu --data DIR --out DIR [--device cpu --tiny]`` (see benchmarks/gpu/check.sh)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

from benchmarks.gpu.plan import SECTIONS


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks gpu", description=__doc__)
    parser.add_argument(
        "--data", required=True, help="folder holding wmt-kk-en.jsonl (benchmarks/gpu/slice.sh writes it)"
    )
    parser.add_argument("--out", required=True, help="folder for gpu_check.json and gpu_check.log")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (the dry run)")
    parser.add_argument("--tiny", action="store_true", help="tiny models and few items (the CPU dry run)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, among {','.join(SECTIONS)}")
    parser.add_argument(
        "--budget", action="append", default=[], metavar="SECTION=SECONDS", help="override a section's time box"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Parallel tokenization: on the H200's 16 cores it cut a roberta-large-shaped bf16 call from
    # 0.47 s to 0.28 s (BENCHMARKS.md "GPU"). Safe here: the sections are forked from a parent
    # that never tokenizes, and the server is a new process.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from benchmarks.gpu import CheckConfig, run_check
    from nlgscore.errors import ArgumentError

    try:
        budgets = {k: float(v) for k, _, v in (b.partition("=") for b in args.budget)}
        config = CheckConfig(
            data=args.data,
            out=args.out,
            device=args.device,
            tiny=args.tiny,
            sections=tuple(s for s in args.sections.split(",") if s),
            budgets=budgets,
        )
    except (ArgumentError, ValueError) as err:
        parser.error(str(err))
    report = run_check(config)
    statuses = {name: section["status"] for name, section in report["sections"].items()}
    print(
        json.dumps(
            {
                "out": os.path.join(args.out, "gpu_check.json"),
                "statuses": statuses,
                "total_seconds": report["total_seconds"],
            }
        )
    )
    return 0 if all(s == "ok" for s in statuses.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
