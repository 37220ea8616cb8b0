"""The chart of meta-evaluation results, dot and whisker (needs the ``plot`` extra): ``nlgscore meta --plot``.

>>> fig = plot_correlations([{"dataset": "d", "metric": "m", "level": "seg", "measure": "pearson", "value": 0.5}])
>>> fig.axes[0].get_title()
'd · seg · pearson'
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from nlgscore.backend.extras import pyplot as _pyplot
from nlgscore.errors import ArgumentError

# Rows that are not a correlation or an accuracy (a share of ties, a tie threshold) stay off the chart's axis.
NOT_CORRELATIONS = ("metric-ties", "acc-t-epsilon")


def _rows(rows: Any) -> List[Dict[str, Any]]:
    """Meta rows from a list of dicts/Row objects, a ``{"results": [...]}`` document or its JSON file
    (its WMT24 ``summary`` averages become rows too)."""
    if isinstance(rows, (str, bytes)) or hasattr(rows, "read_text"):
        import json
        from pathlib import Path

        rows = json.loads(Path(rows).read_text(encoding="utf-8"))
    if isinstance(rows, Mapping):
        summary = [
            dict(
                dataset=s["dataset"], metric=s["metric"], level="WMT24", measure="SPA+acc-t average", value=s["average"]
            )
            for s in rows.get("summary", [])
        ]
        rows = list(rows.get("results", [])) + summary
    out = []
    for row in rows:
        record = dict(row) if isinstance(row, Mapping) else dict(vars(row))
        missing = {"dataset", "metric", "level", "measure", "value"} - set(record)
        if missing:
            raise ArgumentError(f"meta-evaluation row {record} lacks {sorted(missing)}")
        if record["measure"] in NOT_CORRELATIONS:
            continue
        for key in ("value", "ci_low", "ci_high"):
            value = record.get(key)
            record[key] = math.nan if value is None else float(value)
        out.append(record)
    if not out:
        raise ArgumentError("nothing to plot: no meta-evaluation rows")
    return out


def plot_correlations(rows: Any, path: Optional[str] = None, title: str = ""):
    """Dot-and-whisker chart of meta-evaluation results: one panel per (dataset, level, measure),
    one line per metric sorted by value, with the confidence interval when there is one.

    ``rows`` are the meta JSON rows (``{"dataset", "metric", "level", "measure", "value",
    "ci_low", "ci_high"}``, dicts or ``nlgscore.meta.report.Row``), a ``{"results": [...]}``
    document, or the path of such a JSON file. Returns the Figure; saved when ``path`` is given.
    """
    records = _rows(rows)
    panels: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = {}
    for record in records:
        panels.setdefault((record["dataset"], record["level"], record["measure"]), []).append(record)
    plt = _pyplot()
    n = len(panels)
    ncols = min(n, 3)
    nrows = math.ceil(n / ncols)
    tallest = max(len(group) for group in panels.values())
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 1.3 + 0.38 * tallest * nrows), squeeze=False)
    for ax, ((dataset, level, measure), group) in zip(axes.flat, panels.items()):
        group = sorted(group, key=lambda r: (math.isnan(r["value"]), r["value"]))
        ys = np.arange(len(group))
        values = np.array([r["value"] for r in group])
        lows = np.array([r["ci_low"] for r in group])
        highs = np.array([r["ci_high"] for r in group])
        has_ci = ~(np.isnan(lows) | np.isnan(highs))
        ax.hlines(ys[has_ci], lows[has_ci], highs[has_ci], color="#1f77b4", linewidth=2.2, alpha=0.7)
        ax.plot(values, ys, "o", color="#1f77b4", markersize=6)
        for y, value in zip(ys, values):
            if not math.isnan(value):
                ax.annotate(
                    f"{value:.3f}", (value, y), xytext=(0, 7), textcoords="offset points", ha="center", fontsize=7
                )
        ax.set_yticks(ys)
        ax.set_yticklabels([r["metric"] for r in group], fontsize=9)
        ax.set_ylim(-0.7, len(group) - 0.3)
        ax.set_title(f"{dataset} · {level} · {measure}", fontsize=10)
        ax.grid(axis="x", linestyle=":", alpha=0.6)
        if np.nanmin(np.concatenate([values, lows[has_ci]])) < 0 < np.nanmax(np.concatenate([values, highs[has_ci]])):
            ax.axvline(0.0, color="black", linewidth=0.8)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.supxlabel("correlation / accuracy with human judgments (bars: confidence interval)", fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=130, bbox_inches="tight")
        plt.close(fig)
    return fig
