"""The benchmark of issue #6 (``nlgscore bench`` / ``scripts/bench.py``): a benchmark, not a test.

It compares nlgscore with bert_score 0.3.13 (the optional ``[bench]`` extra) and with a
BARTScore-style reference loop, in one run, each side in its own process; see BENCHMARKS.md.

>>> from nlgscore.bench import BenchConfig
>>> BenchConfig(data="pairs.jsonl", n=20, repeats=1).sections
('bertscore', 'trainer', 'memory', 'bartscore')
"""

from nlgscore.bench.report import BenchSummary, evaluate_targets, render_markdown, render_text, write_markdown
from nlgscore.bench.config import SECTIONS, BenchConfig, bert_score_available
from nlgscore.bench.runner import run_benchmark

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
