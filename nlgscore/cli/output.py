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
from typing import Any, Dict, List, Optional

from nlgscore.cli.options import json_safe


def print_result(
    result: Any, args: argparse.Namespace, labels: Optional[Dict[str, str]] = None, seg_columns: Optional[List[str]] = None
) -> None:
    """Print ``result`` as the command line asked; ``labels`` maps columns to the system line's names.

    The system line is ``<signature> <label>: <value> ...`` (bert_score's CLI format for
    BERTScore); ``--seg`` first prints each line's columns tab-separated, primary first.
    """
    columns = result.columns()
    primary = result.primary
    labels = labels or {primary: primary}
    if getattr(args, "json", False):
        json.dump(json_safe(result.to_dict()), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    if getattr(args, "seg", False):
        names: List[str] = [n for n in (seg_columns or labels) if n in columns] or [primary]
        for row in zip(*(columns[n] for n in names)):
            print("\t".join(f"{v:.6f}" for v in row))
    system = result.system
    shown = " ".join(f"{label}: {system.get(name, math.nan):.6f}" for name, label in labels.items())
    print(f"{result.signature} {shown}")
