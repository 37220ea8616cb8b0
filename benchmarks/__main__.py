"""``python -m benchmarks COMMAND [ARGS]``: the lab's one entry point.

    python -m benchmarks harness --data data/wmt-kk-en.jsonl --n 2000 --repeats 3
    python -m benchmarks gpu --data .gpu/data --out out/gpu [--device cpu --tiny]
    python -m benchmarks bench_serve --data data/wmt-kk-en.jsonl --n 512 --rounds 3
    python -m benchmarks --list

``harness`` and ``gpu`` are packages here; any other COMMAND runs ``benchmarks/scripts/COMMAND.py``
with ARGS, as if it had been started as that script.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import List, Optional

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def scripts() -> List[str]:
    """The workload scripts, by the name ``python -m benchmarks NAME`` takes."""
    return sorted(path.stem for path in SCRIPTS.glob("*.py"))


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(__doc__.strip() + "\n\ncommands: harness, gpu, " + ", ".join(scripts()))
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "harness":
        from benchmarks.harness.cli import main as harness

        return harness(rest)
    if command == "gpu":
        from benchmarks.gpu.__main__ import main as gpu

        return gpu(rest)
    if command not in scripts():
        print(
            f"python -m benchmarks: error: unknown command {command!r}; one of harness, gpu, {', '.join(scripts())}",
            file=sys.stderr,
        )
        return 2
    path = SCRIPTS / f"{command}.py"
    sys.argv = [str(path), *rest]
    sys.path.insert(0, str(SCRIPTS))  # as for `python benchmarks/scripts/NAME.py`: sibling scripts import
    runpy.run_path(str(path), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
