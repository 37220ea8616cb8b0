"""Meta-evaluation results as rows, and their text table, JSON and CSV forms (the chart: ``meta.plot``).

One ``Row`` per dataset x metric x level x measure; ``ci_low``/``ci_high`` are NaN when no
interval was computed (written as ``null`` in JSON and empty in CSV). A ``value`` that is NaN is
undefined for those scores (a correlation with a constant side): ``null`` in JSON, empty in CSV and
``n/a`` in the text table, which the task's notes explain (:data:`UNDEFINED`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Dict, List, Optional, Sequence, Tuple, Union


@dataclass(frozen=True)
class Row:
    """One meta-evaluation number."""

    dataset: str
    metric: str
    level: str
    measure: str
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    signature: str = ""


# Column order of the CSV and of each JSON record.
FIELDS = tuple(f.name for f in fields(Row))
UNDEFINED = "n/a"  # the text table's cell for a NaN value; a note starting "n/a:" says why


def _json_number(value: float) -> Optional[float]:
    return None if value is None or math.isnan(value) else float(value)


def to_json(rows: Sequence[Row]) -> Dict[str, List[Dict[str, Union[str, float, None]]]]:
    """``{"results": [row, ...]}`` with NaN as None (valid JSON).

    >>> to_json([Row("kk-en", "chrf", "segment", "tau", 0.5)])["results"][0]["ci_low"] is None
    True
    """
    results = []
    for row in rows:
        record = asdict(row)
        for key in ("value", "ci_low", "ci_high"):
            record[key] = _json_number(record[key])
        results.append(record)
    return {"results": results}


def json_text(rows: Sequence[Row]) -> str:
    """``to_json(rows)`` as the text of a JSON file."""
    return json.dumps(to_json(rows), indent=2, ensure_ascii=False) + "\n"


def csv_text(rows: Sequence[Row]) -> str:
    """The rows as CSV text with a header of ``FIELDS``; NaN as an empty cell.

    >>> print(csv_text([Row("kk-en", "chrf", "segment", "tau", 0.5)]), end="")
    dataset,metric,level,measure,value,ci_low,ci_high,signature
    kk-en,chrf,segment,tau,0.5,,,
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in to_json(rows)["results"]:
        writer.writerow({k: "" if v is None else v for k, v in record.items()})
    return out.getvalue()


def _value(value: float) -> str:
    return UNDEFINED if math.isnan(value) else f"{value:.4f}"


def _interval(row: Row) -> str:
    if math.isnan(row.ci_low) or math.isnan(row.ci_high):
        return ""
    return f"[{row.ci_low:.4f}, {row.ci_high:.4f}]"


def format_table(rows: Sequence[Row]) -> str:
    """Fixed-width text table, one line per row (the CI column only when some row has an interval).

    >>> print(format_table([Row("kk-en", "chrf", "segment", "tau", 0.322985, 0.31, 0.34)]))
    dataset  level    measure  metric  value   95% CI
    kk-en    segment  tau      chrf    0.3230  [0.3100, 0.3400]
    >>> print(format_table([Row("en-cs", "chrf", "segment", "pdp", math.nan)]))
    dataset  level    measure  metric  value
    en-cs    segment  pdp      chrf    n/a
    """
    header: Tuple[str, ...] = ("dataset", "level", "measure", "metric", "value", "95% CI")
    lines: List[Tuple[str, ...]] = [
        (r.dataset, r.level, r.measure, r.metric, _value(r.value), _interval(r)) for r in rows
    ]
    if not any(line[-1] for line in lines):  # no intervals at all (--bootstrap 0, WMT22-25 measures)
        header, lines = header[:-1], [line[:-1] for line in lines]
    return text_table(header, lines)


def text_table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart, the header first.

    >>> print(text_table(("a", "bb"), [("xyz", "1")]))
    a    bb
    xyz  1
    """
    every = [tuple(header)] + [tuple(line) for line in lines]
    widths = [max(len(line[i]) for line in every) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in every)
