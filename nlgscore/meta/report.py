"""Meta-evaluation results as rows, and their text table, JSON, CSV and bar-chart forms.

One ``Row`` per dataset x metric x level x measure; ``ci_low``/``ci_high`` are NaN when no
interval was computed (written as ``null`` in JSON and empty in CSV).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

from nlgscore.core.extras import pyplot


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


def write_json(rows: Sequence[Row], path: Union[str, Path]) -> None:
    """Write ``to_json(rows)`` to ``path``."""
    Path(path).write_text(json.dumps(to_json(rows), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_csv(rows: Sequence[Row], path: Union[str, Path]) -> None:
    """Write the rows with a header of ``FIELDS``; NaN as an empty cell."""
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for record in to_json(rows)["results"]:
            writer.writerow({k: "" if v is None else v for k, v in record.items()})


def _interval(row: Row) -> str:
    if math.isnan(row.ci_low) or math.isnan(row.ci_high):
        return ""
    return f"[{row.ci_low:.4f}, {row.ci_high:.4f}]"


def format_table(rows: Sequence[Row]) -> str:
    """Fixed-width text table, one line per row.

    >>> print(format_table([Row("kk-en", "chrf", "segment", "tau", 0.322985, 0.31, 0.34)]))
    dataset  level    measure  metric  value   95% CI
    kk-en    segment  tau      chrf    0.3230  [0.3100, 0.3400]
    """
    header = ("dataset", "level", "measure", "metric", "value", "95% CI")
    lines = [header] + [
        (r.dataset, r.level, r.measure, r.metric, f"{r.value:.4f}", _interval(r)) for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def _groups(rows: Sequence[Row]) -> Tuple[List[Tuple[str, str, str]], List[str]]:
    groups: List[Tuple[str, str, str]] = []
    metrics: List[str] = []
    for row in rows:
        key = (row.dataset, row.level, row.measure)
        if key not in groups:
            groups.append(key)
        if row.metric not in metrics:
            metrics.append(row.metric)
    return groups, metrics


def plot_rows(rows: Sequence[Row], path: Union[str, Path], title: str = "") -> None:
    """Grouped bar chart (one group per dataset/level/measure, one bar per metric) with
    95% CI error bars, saved to ``path``. Needs matplotlib (``pip install nlgscore[plot]``)."""
    plt = pyplot()
    if not rows:
        raise ValueError("nothing to plot: no result rows")
    groups, metrics = _groups(rows)
    by_key = {(r.dataset, r.level, r.measure, r.metric): r for r in rows}
    width = 0.8 / len(metrics)
    # At least ~1.7 inch per group so that two-line tick labels never touch.
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + len(groups) * max(1.7, len(metrics) * 0.45)), 4.5))
    for m_index, metric in enumerate(metrics):
        xs, values, ci_xs, ci_values, errors = [], [], [], [], [[], []]
        for g_index, group in enumerate(groups):
            row = by_key.get((*group, metric))
            if row is None:
                continue
            xs.append(g_index + (m_index - (len(metrics) - 1) / 2) * width)
            values.append(row.value)
            if not (math.isnan(row.ci_low) or math.isnan(row.ci_high)):
                ci_xs.append(xs[-1])
                ci_values.append(row.value)
                errors[0].append(row.value - row.ci_low)
                errors[1].append(row.ci_high - row.value)
        ax.bar(xs, values, width, label=metric)
        if ci_xs:  # rows without an interval get no error bar at all
            ax.errorbar(ci_xs, ci_values, yerr=errors, fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["\n".join(group) for group in groups])
    ax.set_ylabel("correlation with human judgments")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.legend(title="metric", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
