#!/usr/bin/env python
"""Issue #6 benchmark; the same as ``nlgscore bench`` (see BENCHMARKS.md for the command that regenerates it).

    python scripts/bench.py --data ../shared/data/wmt-kk-en.jsonl --n 2000 --repeats 3 \
        --json bench.json --markdown BENCHMARKS.md
"""

import sys

from nlgscore.cli import main

if __name__ == "__main__":  # the guard also keeps spawned benchmark workers from re-running it
    sys.exit(main(["bench", *sys.argv[1:]]))
