"""Benchmark inputs: pairs read from a WMT DARR JSONL file.

Each line is ``{id, lp, src, ref, better: {system, text}, worse: {system, text}}``. The benchmark
scores ``better.text`` against ``ref`` (and ``worse.text`` in the training-loop case). Lines whose
reference or either candidate is blank are skipped, because bert_score 0.3.13 prints a warning and
special-cases empty strings, which is not what is being timed. When more pairs are asked for than
the file holds, the file is cycled (the 20,000-pair memory check measures growth with the corpus, which
repeated pairs still show; the kk-en file holds 9,728 pairs).
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from itertools import cycle, islice
from typing import Dict, List

from nlgscore.errors import ArgumentError, DataError


@dataclass
class Pairs:
    """Parallel lists of the first ``n`` usable pairs of a DARR file."""

    refs: List[str]
    better: List[str]
    worse: List[str]
    srcs: List[str] = field(default_factory=list)
    skipped: int = 0  # blank lines in the part of the file that was read
    distinct_in_file: int = 0  # usable pairs in the whole file (before cycling)

    def __len__(self) -> int:
        return len(self.refs)

    def head(self, n: int) -> "Pairs":
        """The first ``n`` pairs (``n`` at most ``len(self)``)."""
        return Pairs(self.refs[:n], self.better[:n], self.worse[:n], self.srcs[:n], self.skipped, self.distinct_in_file)


def _usable(row: Dict) -> bool:
    texts = (row.get("ref"), (row.get("better") or {}).get("text"), (row.get("worse") or {}).get("text"))
    return all(isinstance(t, str) and t.strip() for t in texts)


def load_pairs(path: str, n: int) -> Pairs:
    """Read the first ``n`` usable pairs of ``path`` (cycling over the file if it holds fewer)."""
    if n < 1:
        raise ArgumentError(f"n must be positive, got {n}")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            errno.ENOENT, "data file does not exist (a WMT DARR JSONL file, e.g. data/wmt-kk-en.jsonl)", path
        )
    rows: List[Dict] = []
    skipped = 0
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"data file {path!r}, line {line_no}: not JSON ({err})") from err
            if _usable(row):
                rows.append(row)
            else:
                skipped += 1
    if not rows:
        raise DataError(f"data file {path!r} holds no pair with a non-blank ref, better.text and worse.text")
    chosen = list(islice(cycle(rows), n))
    return Pairs(
        refs=[r["ref"] for r in chosen],
        better=[r["better"]["text"] for r in chosen],
        worse=[r["worse"]["text"] for r in chosen],
        srcs=[r.get("src", "") for r in chosen],
        skipped=skipped,
        distinct_in_file=len(rows),
    )
