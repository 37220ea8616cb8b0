"""What ``make demo`` and ``make test`` install: size, distributions and time of a new ``.venv``.

Each target runs the Makefile's own install step (``install-demo``, ``install``) into a fresh
virtual environment in a temporary folder (``make VENV=...``), so the figures are those of a new
checkout on this machine with pip configured as it is here (index, wheel cache, find-links: the
table states which). It prints one Markdown row per target, the rows of BENCHMARKS.md's
"Installs" table; the README states no such figure, only where to find them.

    python -m benchmarks install_sizes                 # both targets
    python -m benchmarks install_sizes --target demo   # one
    python -m benchmarks install_sizes --no-cache      # pip's wheel cache off (PIP_NO_CACHE_DIR)

Each target takes minutes and the size of its ``.venv`` in disk space while it runs (removed after).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
# target -> (the Makefile's install step, what it installs, as the table's column says)
TARGETS = {
    "demo": ("install-demo", "torch (CPU), the package, `[embedded]`"),
    "test": ("install", "torch (CPU), the package, `[test]` (ray, trl, lighteval, inspect-ai ...)"),
}


def disk_usage(folder: Path) -> int:
    """Bytes of disk ``folder`` takes, as ``du`` counts them (allocated blocks, hard links once)."""
    seen, total = set(), 0
    for path in folder.rglob("*"):
        stat = path.lstat()
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def distributions(venv: Path) -> int:
    """Distributions installed in ``venv``, as ``pip list`` counts them (pip itself included)."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return len([line for line in out.splitlines() if line.strip()])


def measure(target: str, no_cache: bool) -> Dict[str, object]:
    step, _ = TARGETS[target]
    env = dict(os.environ, PIP_NO_CACHE_DIR="1") if no_cache else dict(os.environ)
    with tempfile.TemporaryDirectory(prefix=f"nlgscore-install-{target}-") as tmp:
        venv = Path(tmp) / "venv"
        start = time.perf_counter()
        subprocess.run(["make", "--no-print-directory", step, f"VENV={venv}"], cwd=ROOT, env=env, check=True)
        seconds = time.perf_counter() - start
        return {"target": target, "bytes": disk_usage(venv), "distributions": distributions(venv), "seconds": seconds}


def row(figures: Dict[str, object]) -> str:
    """One row of the table.

    >>> row({"target": "demo", "bytes": 1.8e9, "distributions": 73, "seconds": 325.0})
    '| `make demo` | torch (CPU), the package, `[embedded]` | 1.8 GB | 73 | 5 min 25 s |'
    """
    seconds = round(float(figures["seconds"]))  # type: ignore[arg-type]
    size = float(figures["bytes"]) / 1e9  # type: ignore[arg-type]
    took = f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"
    return f"| `make {figures['target']}` | {TARGETS[str(figures['target'])][1]} | {size:.1f} GB | {figures['distributions']} | {took} |"


def pip_setting() -> str:
    """Where this machine's pip takes wheels from (the table's context)."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    lines = [line for line in out.splitlines() if "index-url" in line or "find-links" in line]
    return "; ".join(sorted(set(lines))) or "pip's defaults (PyPI)"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", choices=sorted(TARGETS), action="append", help="a target (default: both)")
    parser.add_argument("--no-cache", action="store_true", help="pip's wheel cache off (PIP_NO_CACHE_DIR=1)")
    args = parser.parse_args(argv)
    if shutil.which("make") is None:
        parser.error("needs make")
    rows = [row(measure(target, args.no_cache)) for target in args.target or list(TARGETS)]
    print(f"pip: {pip_setting()}; wheel cache {'off' if args.no_cache else 'on'}; Python {sys.version.split()[0]}")
    print("| target | installs | size of `.venv` | distributions | time to a new `.venv` |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
