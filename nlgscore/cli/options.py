"""What the scoring commands share: reading segment files and the run-time options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional, Sequence, Tuple


def read_lines(path: Path, what: str) -> List[str]:
    """Lines of a text file; a missing file is an error (never read as literal text, bert_score #63)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    text = Path(path).read_text(encoding="utf-8")
    # Split on "\n" only: other Unicode line separators may sit inside a segment.
    return (text[:-1] if text.endswith("\n") else text).split("\n") if text else []


def check_aligned(first: Tuple[Path, Sequence[str]], others: Sequence[Tuple[Optional[Path], Optional[Sequence[str]]]]) -> None:
    """Every file must have as many lines as the first one; the error names both files."""
    path0, lines0 = first
    for path, lines in others:
        if lines is not None and len(lines) != len(lines0):
            raise ValueError(f"{path} has {len(lines)} lines but {path0} has {len(lines0)}")


def add_runtime_options(
    parser: argparse.ArgumentParser,
    *,
    batch_size: Optional[int] = None,
    batch_help: str = "most pairs per batch (default: token budget only)",
    tokens_help: str = "encoder + decoder tokens per batch",
    seg_short: bool = False,
    dtype: bool = True,
) -> None:
    """Batching, device, output format and progress options, spelled the same in every command."""
    parser.add_argument("-b", "--batch-size", type=int, default=batch_size, help=batch_help)
    parser.add_argument("--max-tokens", type=int, default=None, help=tokens_help)
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    if dtype:
        parser.add_argument("--dtype", default=None, help="float32 (default), bfloat16 or float16 (GPU only)")
    seg_flags = ("-s", "--seg") if seg_short else ("--seg",)
    parser.add_argument(*seg_flags, action="store_true", help="also print the score of every line")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar on stderr (default: on)")
