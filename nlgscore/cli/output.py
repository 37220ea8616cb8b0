"""How the scoring commands print a result: ``--json``, ``--seg`` lines, then the system line.

>>> from nlgscore.core.result import Result
>>> from nlgscore.core.signature import Signature
>>> result = Result(Signature("toy", _versions=False), {"s": [1.0, 0.5], "t": [0.0, 1.0]}, "s")
>>> print_result(result, argparse.Namespace(seg=True, json=False), {"s": "S", "t": "T"})  # doctest: +NORMALIZE_WHITESPACE
1.000000 0.000000
0.500000 1.000000
nlgscore:toy S: 0.750000 T: 0.500000
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Dict, List, Optional, Sequence

from nlgscore.cli.options import json_safe


def primary_name(result: Any) -> str:
    """The column a single number comes from (``f1`` for BERTScore)."""
    return getattr(result, "primary", "") or next(iter(result.columns()))


def system_values(result: Any) -> Dict[str, float]:
    """Every column's system value (the mean over items; NaN when there are none)."""
    system = getattr(result, "system", None)
    if isinstance(system, dict):
        return {name: float(value) for name, value in system.items()}
    values = {name: _mean(column) for name, column in result.columns().items()}
    score = getattr(result, "score", system)
    if isinstance(score, (int, float)):
        values[primary_name(result)] = float(score)
    return values


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if len(values) else math.nan


def print_result(
    result: Any, args: argparse.Namespace, labels: Optional[Dict[str, str]] = None, seg_columns: Optional[List[str]] = None
) -> None:
    """Print ``result`` as the command line asked; ``labels`` maps columns to the system line's names.

    The system line is ``<signature> <label>: <value> ...`` (bert_score's CLI format for
    BERTScore); ``--seg`` first prints each line's columns tab-separated, primary first.
    """
    columns = result.columns()
    primary = primary_name(result)
    labels = labels or {primary: primary}
    if getattr(args, "json", False):
        json.dump(json_safe(result.to_dict()), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    if getattr(args, "seg", False):
        names: List[str] = [n for n in (seg_columns or labels) if n in columns] or [primary]
        for row in zip(*(columns[n] for n in names)):
            print("\t".join(f"{v:.6f}" for v in row))
    system = system_values(result)
    shown = " ".join(f"{label}: {system.get(name, math.nan):.6f}" for name, label in labels.items())
    print(f"{result.signature} {shown}")
