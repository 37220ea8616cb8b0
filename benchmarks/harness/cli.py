"""``python -m benchmarks harness``: the full comparison with bert_score 0.3.13 and a BARTScore-style loop.

    python -m benchmarks harness --data data/wmt-kk-en.jsonl --n 2000 --repeats 3 --json-out bench.json

Each side runs in its own worker process; the ratios are medians of per-repeat ratios measured
side by side. ``--markdown FILE`` refreshes the generated section of FILE; the project's own
targets are judged in the JSON report and in that section, never in ``nlgscore bench``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from typing import List, Optional

PROG = "python -m benchmarks harness"


def _ints(text: str) -> List[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The harness's options; defaults are :class:`~benchmarks.harness.config.BenchConfig`'s.

    >>> build_parser().parse_args(["--data", "d.jsonl", "--budgets", "512,1024"]).budgets
    [512, 1024]
    """
    from benchmarks.harness.config import BenchConfig

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    default = {f.name: f.default for f in dataclasses.fields(BenchConfig)}
    parser.add_argument("--data", required=True, help="WMT DARR JSONL file, e.g. data/wmt-kk-en.jsonl")
    parser.add_argument(
        "--n",
        type=int,
        default=default["n"],
        help=f"pairs scored (first N better-system pairs; default {default['n']})",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=default["repeats"],
        help=f"timed repetitions; ratios are medians (default {default['repeats']})",
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i] (default cpu)")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="nlgscore's precision (bert_score stays fp32)",
    )
    parser.add_argument(
        "--model-shape",
        default="minilm",
        choices=["minilm", "roberta-large"],
        help="embedded MiniLM, or a random-weight roberta-large shape",
    )
    parser.add_argument(
        "--num-layers", type=int, default=None, help="BERTScore layer (default: 4 for MiniLM, 17 for roberta-large)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="nlgscore's token budget per batch (default: the library's)"
    )
    parser.add_argument(
        "--bert-score-batch-size",
        type=int,
        default=default["bert_score_batch_size"],
        help="bert_score's batch_size (default: its own, 64)",
    )
    parser.add_argument(
        "--bart-n",
        type=int,
        default=default["bart_n"],
        help=f"pairs for the BARTScore comparison (default {default['bart_n']})",
    )
    parser.add_argument(
        "--bart-model", default=None, help="seq2seq checkpoint for BARTScore (default: a random-weight bart-base shape)"
    )
    parser.add_argument(
        "--memory-n",
        type=int,
        default=default["memory_n"],
        help=f"large corpus of the memory check (default {default['memory_n']})",
    )
    parser.add_argument(
        "--sections",
        default="bertscore,trainer,memory,bartscore",
        help="comma-separated among bertscore,trainer,memory,bartscore,budgets",
    )
    parser.add_argument(
        "--budgets", type=_ints, default=list(default["budgets"]), help="token budgets for the 'budgets' section"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads in each worker (default: torch's)")
    parser.add_argument("--workdir", default=None, help="keep random-weight models here (default: a temporary folder)")
    parser.add_argument(
        "--json-out", dest="json_path", default=None, metavar="PATH", help="also write the full report as JSON"
    )
    parser.add_argument("--markdown", default=None, help="write/refresh the generated section of this Markdown file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the harness; print the measured values (the JSON report with ``--json-out``)."""
    from benchmarks.harness import BenchConfig, render_text, run_benchmark, write_markdown
    from nlgscore.errors import NlgscoreError

    parser = build_parser()
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    names = {f.name for f in dataclasses.fields(BenchConfig)} - {"command"}
    options = {k: v for k, v in vars(args).items() if k in names}
    options["sections"] = tuple(s.strip() for s in args.sections.split(",") if s.strip())
    options["budgets"] = tuple(args.budgets)
    progress = None if args.quiet else (lambda message: print(f"[bench] {message}", file=sys.stderr, flush=True))
    try:
        config = BenchConfig(**options, command=shlex.join([*PROG.split(), *argv]))
        report = run_benchmark(config, progress=progress)
    except (NlgscoreError, FileNotFoundError) as err:
        parser.exit(2, f"{PROG}: error: {err}\n")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    if args.markdown:
        write_markdown(report, args.markdown)
    print(render_text(report), end="")
    return 0
