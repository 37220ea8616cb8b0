"""The benchmark report: the project's targets, a terminal table, and the BENCHMARKS.md section.

``--markdown FILE`` rewrites only the part of FILE between :data:`BEGIN` and :data:`END`, so the
hand-written analysis around the generated numbers survives a regeneration.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

BEGIN = "<!-- nlgscore bench: generated, do not edit by hand -->"
END = "<!-- nlgscore bench: end -->"

# (name, description, comparison, CPU threshold, GPU threshold): the project's targets; None: not a target there.
_TARGETS = [
    ("bertscore_speedup", "BERTScore pairs/s vs bert_score", ">=", 2.5, 5.0),
    ("bertscore_max_abs_diff_f1", "BERTScore max |ΔF| vs bert_score (fp32)", "<=", 1e-5, 1e-5),
    ("bertscore_mfu", "BERTScore model FLOP utilisation (useful FLOPs)", ">=", 0.65, 0.40),
    ("bertscore_bf16_vs_fp32", "BERTScore bf16 vs fp32 max |ΔF|", "<=", None, 0.01),
    ("trainer_speedup", "training loop (3 calls, reference cache) vs bert_score", ">=", 3.5, None),
    ("bartscore_speedup", "BARTScore vs reference-style loop", ">=", 3.0, None),
    ("bartscore_max_abs_diff", "BARTScore max |Δ| vs reference-style loop", "<=", 1e-5, None),
    ("memory_growth", "peak RSS, large corpus / small corpus (nlgscore)", "<", 1.5, None),
]


def _get(report: Dict[str, Any], *path: str) -> Optional[float]:
    node: Any = report
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _values(report: Dict[str, Any]) -> Dict[str, Optional[float]]:
    sides = _get(report, "bertscore", "sides") or {}
    gpu_fp32 = "nlgscore-fp32" in sides
    return {
        "bertscore_speedup": _get(report, "bertscore", "speedup"),
        "bertscore_max_abs_diff_f1": _get(
            report, "bertscore", "max_abs_diff_f1_fp32_vs_bert_score" if gpu_fp32 else "max_abs_diff_f1"
        ),
        "bertscore_mfu": _get(report, "bertscore", "sides", "nlgscore", "mfu_useful"),
        "bertscore_bf16_vs_fp32": _get(report, "bertscore", "max_abs_diff_f1_vs_fp32"),
        "trainer_speedup": _get(report, "trainer", "speedup"),
        "bartscore_speedup": _get(report, "bartscore", "speedup"),
        "bartscore_max_abs_diff": _get(report, "bartscore", "max_abs_diff"),
        "memory_growth": _get(report, "memory", "sides", "nlgscore", "growth"),
    }


def evaluate_targets(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The targets that apply to this run's device, each with its value and whether it is met."""
    on_gpu = str(_get(report, "config", "device") or "cpu").startswith("cuda")
    values = _values(report)
    out = []
    for name, what, op, cpu, gpu in _TARGETS:
        threshold = gpu if on_gpu else cpu
        if threshold is None:
            continue
        value = values[name]
        met = None
        if value is not None:
            met = {">=": value >= threshold, "<=": value <= threshold, "<": value < threshold}[op]
        out.append({"name": name, "what": what, "target": f"{op} {threshold:g}", "value": value, "met": met})
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        size = abs(value)
        if value != 0 and (size < 1e-3 or size >= 1e6):
            return f"{value:.2e}"
        if size >= 100:
            return f"{value:.0f}"
        return f"{value:.1f}" if size >= 10 else f"{value:.2f}" if size >= 1 else f"{value:.3g}"
    return str(value)


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _table(header: List[str], rows: List[List[Any]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    # A "|" inside a cell (as in |ΔF|) would end the cell.
    lines += [
        "| " + " | ".join((c if isinstance(c, str) else _fmt(c)).replace("|", "\\|") for c in row) + " |"
        for row in rows
    ]
    return lines


def render_markdown(report: Dict[str, Any]) -> str:
    """The generated part of BENCHMARKS.md (machine, command, one table per section, targets)."""
    machine = report.get("machine", {})
    versions = ", ".join(f"{k} {v}" for k, v in machine.get("versions", {}).items())
    cfg = report.get("config", {})
    lines = [
        f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores "
        f"(torch threads: {machine.get('torch_threads', '?')})"
        + (f", GPU: {machine['gpu']}" if machine.get("gpu") else "")
        + ".",
        f"Versions: {versions}; Python {machine.get('python', '?')}.",
        "",
        "Command:",
        "",
        "```",
        cfg.get("command") or "(run from Python)",
        "```",
        "",
    ]
    lines += _targets_md(report) + [""]
    for part in (_bertscore_md, _trainer_md, _memory_md, _bartscore_md, _budgets_md, _matmul_md):
        block = part(report)
        if block:
            lines += block + [""]
    return "\n".join(lines).rstrip() + "\n"


def _targets_md(report: Dict[str, Any]) -> List[str]:
    rows = []
    for t in report.get("targets", []):
        value = t["value"]
        shown = _pct(value) if t["name"].endswith("mfu") else _fmt(value)
        met = {True: "met", False: "**not met**", None: "not measured"}[t["met"]]
        rows.append(
            [
                t["what"],
                t["target"]
                if not t["name"].endswith("mfu")
                else t["target"].split()[0] + " " + _pct(float(t["target"].split()[1])),
                shown,
                met,
            ]
        )
    return ["### Targets", ""] + _table(["target", "wanted", "measured", ""], rows)


def _bertscore_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("bertscore")
    if not section:
        return []
    model = report.get("model", {})
    lines = [
        f"### BERTScore: {model.get('bertscore')}, layer {model.get('num_layers')}, {report['config']['device']}",
        "",
        f"{section['pairs']} pairs ({section['distinct_sentences']} distinct sentences, {section['useful_tokens']} tokens); "
        f"median of {report['config']['repeats']} repeats; speed-up = median of the per-repeat ratios.",
        "",
    ]
    rows = []
    for label, side in section["sides"].items():
        rows.append(
            [
                f"{label} ({side.get('dtype', 'float32')})",
                side.get("pairs_per_s"),
                _pct(side.get("mfu_useful")),
                _pct(side.get("mfu_executed")),
                _pct(side.get("mfu_useful_vs_matmul")),
                side["executed"]["padded_tokens"],
                side.get("peak_rss_mb"),
            ]
        )
    header = [
        "side",
        "pairs/s",
        "MFU (useful)",
        "MFU (executed)",
        "MFU (useful) vs torch.matmul alone",
        "padded tokens encoded",
        "peak RSS MiB",
    ]
    lines += _table(header, rows)
    lines += [
        "",
        f"Speed-up: **{_fmt(section.get('speedup'))}×**; max |ΔF| vs bert_score: {_fmt(section.get('max_abs_diff_f1'))}.",
    ]
    if "max_abs_diff_f1_vs_fp32" in section:
        lines[-1] += (
            f" bf16 vs fp32 max |ΔF|: {_fmt(section['max_abs_diff_f1_vs_fp32'])}; "
            f"fp32 vs bert_score: {_fmt(section.get('max_abs_diff_f1_fp32_vs_bert_score'))}."
        )
    if report.get("bert_score_skipped"):
        lines += ["", f"bert_score side skipped: {report['bert_score_skipped']}."]
    return lines


def _speed_md(
    section: Dict[str, Any], title: str, intro: str, seconds: str, diff_key: str, diff_label: str
) -> List[str]:
    """A section comparing two sides' speed: heading, intro, table, speed-up and score difference."""
    lines = [f"### {title}", "", intro, ""]
    rows = [[label, side["pairs_per_s"], side["median_seconds"]] for label, side in section["sides"].items()]
    lines += _table(["side", "pairs/s", seconds], rows)
    lines += ["", f"Speed-up: **{_fmt(section.get('speedup'))}×**; {diff_label}: {_fmt(section.get(diff_key))}."]
    return lines


def _trainer_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("trainer")
    if not section:
        return []
    intro = (
        f"{section['pairs_per_call']} pairs per call; nlgscore with its text cache on, as the Trainer path uses it "
        "(`cache_references=True, cache_candidates=True`; emptied before each repeat, so the first call fills it), "
        "bert_score's `BERTScorer` called 3 times; both scorers loaded and warm."
    )
    title = "Training-loop case: the same references, 3 candidate sets in a row (better, worse, better)"
    return _speed_md(section, title, intro, "seconds for 3 calls", "max_abs_diff_f1", "max |ΔF| over the 3 calls")


def _memory_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("memory")
    if not section:
        return []
    small, large = (str(s) for s in section["sizes"])
    distinct = section.get("distinct_sentences", {})
    lines = [
        f"### Memory: peak RSS scoring {small} and {large} pairs (each in a fresh process)",
        "",
        f"Distinct sentences: {distinct.get(small)} and {distinct.get(large)} (the file is cycled past its end).",
        "",
    ]
    rows = []
    for label, side in section["sides"].items():
        rows.append(
            [
                label,
                side[small]["loaded_rss_mb"],
                side[small]["peak_rss_mb"],
                side[large]["peak_rss_mb"],
                f"{side['growth']:.2f}×",
            ]
        )
    lines += _table(
        ["side", "RSS after loading MiB", f"peak, {small} pairs MiB", f"peak, {large} pairs MiB", "growth"], rows
    )
    return lines


def _bartscore_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("bartscore")
    if not section:
        return []
    title = f"BARTScore: {section['model']}, {report['config']['device']}"
    intro = f"{section['pairs']} pairs (src = reference, tgt = better candidate)."
    return _speed_md(section, title, intro, "seconds", "max_abs_diff", "max |Δscore|")


def _budgets_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("budgets")
    if not section:
        return []
    rows = [[f"{budget} tokens", value["pairs_per_s"]] for budget, value in section.items()]
    return ["### nlgscore BERTScore by token budget per batch (`max_tokens`)", ""] + _table(["budget", "pairs/s"], rows)


def _matmul_md(report: Dict[str, Any]) -> List[str]:
    section = report.get("matmul")
    if not section:
        return []
    rows = []

    def gflops(row: Dict[str, Any], key: str) -> str:
        return f"{row[key] / 1e9:.1f}" if key in row else "—"

    for dtype, value in section.items():
        if isinstance(value, dict):
            for shape in value["shapes"]:
                rows.append(
                    [
                        dtype,
                        shape["shape"],
                        gflops(shape, "matmul_flops_per_s"),
                        gflops(shape, "onednn_flops_per_s"),
                        gflops(shape, "flops_per_s"),
                    ]
                )
            rows.append([dtype, "**mean (MFU denominator)**", "", "", f"{value['flops_per_s'] / 1e9:.1f}"])
    title = (
        "### Matrix-multiply throughput, GFLOP/s (per shape the best sample of the run: at its start and end, and in the "
        "nlgscore worker before each timed repeat; the denominator takes the faster of `torch.matmul` and oneDNN's linear)"
    )
    return [title, ""] + _table(["dtype", "shape", "torch.matmul", "oneDNN linear", "best"], rows)


def render_text(report: Dict[str, Any]) -> str:
    """A short terminal summary: what was measured, without the project's internal targets.

    >>> print(render_text({"targets": [{"name": "bertscore_speedup", "what": "BERTScore speed-up", "target": ">= 3",
    ...                                 "value": 2.5, "met": False}]}), end="")
    BERTScore speed-up                                                 2.50
    """
    lines = []
    for t in report.get("targets", []):
        value = t["value"]
        if value is None:
            continue
        shown = _pct(value) if t["name"].endswith("mfu") else _fmt(value)
        lines.append(f"{t['what']:<58} {shown:>12}")
    return "\n".join(lines) + "\n"


class BenchSummary:
    """A benchmark report as the harness prints it: text is :func:`render_text`, json the full
    report, tsv one row per target measured (name, what, target, value, met).

    >>> summary = BenchSummary({"targets": [{"name": "x", "what": "X", "target": ">= 1", "value": 2.0, "met": True}]})
    >>> summary.rows()[0]["value"], str(summary).split()
    (2.0, ['X', '2.00'])
    """

    def __init__(self, report: Dict[str, Any]) -> None:
        self.report = report

    def rows(self) -> List[Dict[str, Any]]:
        return [dict(target) for target in self.report.get("targets", [])]

    def to_dict(self) -> Dict[str, Any]:
        return self.report

    def __str__(self) -> str:
        return render_text(self.report)


def write_markdown(report: Dict[str, Any], path: str) -> None:
    """Replace the generated section of ``path`` (or create the file with just that section)."""
    block = f"{BEGIN}\n{render_markdown(report)}{END}\n"
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1].lstrip("\n")
            text = head + block + ("\n" + tail if tail else "")
        else:
            text = text.rstrip("\n") + "\n\n" + block
    else:
        text = "# Benchmarks\n\n" + block
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
