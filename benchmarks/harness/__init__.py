"""The benchmark harness (``python -m benchmarks harness``): a benchmark, not a test.

It compares nlgscore with bert_score 0.3.13 (the optional ``[bench]`` extra) and with a
BARTScore-style reference loop, in one run, each side in its own process, and judges the
project's targets; see BENCHMARKS.md.

>>> from benchmarks.harness import BenchConfig
>>> BenchConfig(data="pairs.jsonl", n=20, repeats=1).sections
('bertscore', 'trainer', 'memory', 'bartscore')
"""

from benchmarks.harness.config import SECTIONS, BenchConfig, bert_score_available
from benchmarks.harness.report import BenchSummary, evaluate_targets, render_markdown, render_text, write_markdown
from benchmarks.harness.runner import run_benchmark

__all__ = [
    "SECTIONS",
    "BenchSummary",
    "BenchConfig",
    "bert_score_available",
    "evaluate_targets",
    "render_markdown",
    "render_text",
    "run_benchmark",
    "write_markdown",
]
