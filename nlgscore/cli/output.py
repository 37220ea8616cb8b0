"""The one way every command prints what it computed: ``--format text|json|tsv``.

An object printed by :func:`emit` has ``rows()`` (a list of flat dicts: the tsv form),
``to_dict()`` (the json form) and ``__str__`` (the text form). Results, meta-evaluation tables,
comparisons and benchmark reports all do, so the three forms mean the same in every command:
json is one object on one line with ``null`` for NaN/inf; tsv is a header line, then one row per
item with empty cells for missing values.

>>> from nlgscore.core.result import Result
>>> from nlgscore.core.signature import Signature
>>> result = Result(Signature("toy", _versions=False), {"s": [1.0, 0.5], "t": [0.0, float("nan")]}, "s")
>>> print_result(result, argparse.Namespace(seg=True, format="text"), {"s": "S", "t": "T"})  # doctest: +NORMALIZE_WHITESPACE
1.000000 0.000000
0.500000 nan
S: 0.750000 T: nan
nlgscore:toy
>>> emit(result, "tsv")  # doctest: +NORMALIZE_WHITESPACE
s   t
1.0 0.0
0.5
>>> emit(result, "json")
{"s": [1.0, 0.5], "t": [0.0, null], "scores": [1.0, 0.5], "system": {"s": 0.75, "t": null}, "score": 0.75, "signature": "nlgscore:toy"}
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from typing import Any, Callable, Dict, List, Optional, TextIO

from nlgscore.cli.options import FORMATS, json_safe
from nlgscore.errors import ArgumentError


def emit(obj: Any, fmt: str = "text", stream: Optional[TextIO] = None) -> None:
    """Print ``obj`` to ``stream`` (default: stdout) as ``fmt``: text, json or tsv (see the module doc)."""
    stream = sys.stdout if stream is None else stream
    if fmt == "json":
        text = json.dumps(json_safe(obj.to_dict()), ensure_ascii=False)
    elif fmt == "tsv":
        text = tsv(rows_of(obj))
    elif fmt == "text":
        text = str(obj)
    else:
        raise ArgumentError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    stream.write(text if text.endswith("\n") else text + "\n")


def output_format(args: argparse.Namespace) -> str:
    """The format a command's ``args`` ask for (``--format``; a namespace with only ``json=True`` means json)."""
    return getattr(args, "format", None) or ("json" if getattr(args, "json", False) else "text")


def rows_of(obj: Any) -> List[Dict[str, Any]]:
    """``obj.rows()`` (or its ``rows`` list) as dicts; dataclass rows become their fields."""
    rows = obj.rows() if callable(obj.rows) else obj.rows
    return [
        dataclasses.asdict(row) if dataclasses.is_dataclass(row) and not isinstance(row, type) else dict(row)
        for row in rows
    ]


def tsv(rows: List[Dict[str, Any]]) -> str:
    """A header of every key (first-seen order), then one line per row; a tab or newline inside a
    value is written as ``\\t``/``\\n``, and None, NaN and infinity as an empty cell.

    >>> print(tsv([{"system": "a\\tb", "p": 0.25}, {"system": "c", "p": None}]), end="")  # doctest: +NORMALIZE_WHITESPACE
    system	p
    a\\tb	0.25
    c
    """
    keys: List[str] = []
    for row in rows:
        keys.extend(key for key in row if key not in keys)
    lines = ["\t".join(_cell(key) for key in keys)]
    lines += ["\t".join(_cell(row.get(key)) for key in keys) for row in rows]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    value = json_safe(value)
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class ScoreReport:
    """A scorer's result as the scoring commands print it: ``--seg`` lines (text only), then the
    system line ``<label>: <value> ...`` and the signature on a line of its own.

    The values come first and apart: after a signature of a few hundred characters they were off
    screen, and a line of their own is what a reader (or ``head -n1``/``tail -n2``) looks for. The
    machine formats (``--json``, ``--format tsv``) are unchanged.
    """

    def __init__(
        self,
        result: Any,
        labels: Optional[Dict[str, str]] = None,
        seg: bool = False,
        seg_columns: Optional[List[str]] = None,
    ) -> None:
        self.result, self.seg, self.seg_columns = result, seg, seg_columns
        # By default the primary column's system value, and any system value that is not a
        # column's mean (a string metric's sentence_mean beside its corpus statistic).
        self.labels = labels or {
            name: name for name in (result.primary, *[k for k in result.system if k not in result.columns()])
        }

    def rows(self) -> List[Dict[str, Any]]:
        return self.result.rows()

    def to_dict(self) -> Dict[str, Any]:
        return self.result.to_dict()

    def __str__(self) -> str:
        columns, lines = self.result.columns(), []
        if self.seg:
            names = [n for n in (self.seg_columns or self.labels) if n in columns] or [self.result.primary]
            lines = ["\t".join(f"{v:.6f}" for v in row) for row in zip(*(columns[n] for n in names))]
        system = self.result.system
        shown = " ".join(f"{label}: {system.get(name, math.nan):.6f}" for name, label in self.labels.items())
        return "\n".join([*lines, shown, str(self.result.signature)])


def print_result(
    result: Any,
    args: argparse.Namespace,
    labels: Optional[Dict[str, str]] = None,
    seg_columns: Optional[List[str]] = None,
) -> None:
    """Print ``result`` as the command line asked (:func:`output_format`); ``labels`` maps columns
    to the system line's names, ``seg_columns`` picks the ``--seg`` columns (default: the labelled ones)."""
    emit(ScoreReport(result, labels, bool(getattr(args, "seg", False)), seg_columns), output_format(args))


def resume_announcer(
    args: argparse.Namespace, command: str, unit: str = "rows"
) -> Optional[Callable[[int, Optional[int]], None]]:
    """What a resumed ``-o`` run calls to say so on stderr (``nlgscore score: resuming OUT after
    N of M rows``); None under ``--quiet``."""
    if getattr(args, "quiet", False):
        return None

    def announce(done: int, total: Optional[int]) -> None:
        from nlgscore.corpus.outputs.driver import resume_line

        print(f"nlgscore {command}: {resume_line(args.output, done, total, unit)}", file=sys.stderr, flush=True)

    return announce
