"""``nlgscore bench``: the speed/memory/parity benchmark of issue #6 (same as ``scripts/bench.py``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from typing import List

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import add_debug_options, add_format_option, check_device


def _ints(text: str) -> List[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def register(subparsers) -> None:
    """The benchmark's options (``scripts/bench.py`` runs this command); defaults are BenchConfig's."""
    from nlgscore.bench.config import BenchConfig

    parser = subparsers.add_parser(
        "bench", help=COMMANDS["bench"],
        description="Time nlgscore against bert_score 0.3.13 (BERTScore, a training loop with a reference cache, "
        "memory on a large corpus) and against a BARTScore-style loop on WMT daRR pairs, each side in its own "
        "worker process, and check that the scores agree. Prints the measured numbers; --markdown refreshes "
        "the generated section of BENCHMARKS.md.",
    )
    default = {f.name: f.default for f in dataclasses.fields(BenchConfig)}
    parser.add_argument("--data", required=True, help="WMT DARR JSONL file, e.g. ../shared/data/wmt-kk-en.jsonl")
    parser.add_argument("--n", type=int, default=default["n"], help=f"pairs scored (first N better-system pairs; default {default['n']})")
    parser.add_argument("--repeats", type=int, default=default["repeats"], help=f"timed repetitions; ratios are medians (default {default['repeats']})")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i] (default cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"], help="nlgscore's precision (bert_score stays fp32)")
    parser.add_argument("--model-shape", default="minilm", choices=["minilm", "roberta-large"], help="embedded MiniLM, or a random-weight roberta-large shape")
    parser.add_argument("--num-layers", type=int, default=None, help="BERTScore layer (default: 4 for MiniLM, 17 for roberta-large)")
    parser.add_argument("--max-tokens", type=int, default=None, help="nlgscore's token budget per batch (default: the library's)")
    parser.add_argument("--bert-score-batch-size", type=int, default=default["bert_score_batch_size"], help="bert_score's batch_size (default: its own, 64)")
    parser.add_argument("--bart-n", type=int, default=default["bart_n"], help=f"pairs for the BARTScore comparison (default {default['bart_n']})")
    parser.add_argument("--bart-model", default=None, help="seq2seq checkpoint for BARTScore (default: a random-weight bart-base shape)")
    parser.add_argument("--memory-n", type=int, default=default["memory_n"], help=f"large corpus of the memory check (default {default['memory_n']})")
    parser.add_argument("--sections", default="bertscore,trainer,memory,bartscore", help="comma-separated among bertscore,trainer,memory,bartscore,budgets")
    parser.add_argument("--budgets", type=_ints, default=list(default["budgets"]), help="token budgets for the 'budgets' section")
    parser.add_argument("--threads", type=int, default=None, help="torch threads in each worker (default: torch's)")
    parser.add_argument("--workdir", default=None, help="keep random-weight models here (default: a temporary folder)")
    parser.add_argument("--json-out", dest="json_path", default=None, metavar="PATH", help="also write the full report as JSON")
    add_format_option(parser)
    parser.add_argument("--markdown", default=None, help="write/refresh the generated section of this Markdown file")
    add_debug_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so that a missing optional part never breaks the other commands.
    from nlgscore.bench import BenchConfig, BenchSummary, run_benchmark, write_markdown
    from nlgscore.cli.output import emit

    check_device(args.device)
    command = shlex.join(["nlgscore", *getattr(args, "argv", sys.argv[1:])])
    # "command" is also argparse's name for the subcommand: the config's command line is set below.
    names = {f.name for f in dataclasses.fields(BenchConfig)} - {"command"}
    options = {k: v for k, v in vars(args).items() if k in names}
    options["sections"] = tuple(s.strip() for s in args.sections.split(",") if s.strip())
    options["budgets"] = tuple(args.budgets)
    config = BenchConfig(**options, command=command)
    progress = None if getattr(args, "quiet", False) else (lambda message: print(f"[bench] {message}", file=sys.stderr, flush=True))
    report = run_benchmark(config, progress=progress)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    if args.markdown:
        write_markdown(report, args.markdown)
    emit(BenchSummary(report), args.format)
    return 0
