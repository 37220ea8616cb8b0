#!/usr/bin/env python
"""Issue #6 benchmark; same as ``nlgscore bench`` (see BENCHMARKS.md for the command that regenerates it).

    python scripts/bench.py --data ../shared/data/wmt-kk-en.jsonl --n 2000 --repeats 3 \
        --json bench.json --markdown BENCHMARKS.md
"""

import argparse
import sys

from nlgscore.cli.bench import add_arguments, run


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()
    return run(args, argv=["python", "scripts/bench.py", *sys.argv[1:]])


if __name__ == "__main__":  # the guard also keeps spawned benchmark workers from re-running it
    sys.exit(main())
