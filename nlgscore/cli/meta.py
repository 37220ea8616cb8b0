"""``nlgscore meta``: correlation of metrics with human judgments on standard data sets.

    nlgscore meta wmt19 --lp kk-en --metric chrf --metric sentbleu --json out.json
    nlgscore meta wmt21 --data ../shared/data/wmt21-de-en --metric chrf --scores mine=mine.tsv
    nlgscore meta summeval --metric rouge1 --metric chrf --aspect coherence

The tasks live in ``nlgscore.meta.tasks`` (a Python API returning result tables); this module only
parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nlgscore.cli.options import (
    add_runtime_options, check_device, fail, positive_int, progress_enabled, runtime_settings,
)
from nlgscore.meta.resample import DEFAULT_SEED
from nlgscore.meta.wmt import TIES_RULES

DATA_HELP = "data folder (default: $NLGSCORE_DATA, else $XDG_DATA_HOME/nlgscore, else ~/.cache/nlgscore/data)"


def _common_options(parser: argparse.ArgumentParser, scores_help: str) -> None:
    parser.add_argument("--data", type=Path, default=None, help=DATA_HELP)
    parser.add_argument("--metric", action="append", default=[],
                        help="metric spec: chrf, bleu, sentbleu, rouge1/rouge2/rougeL or a registry spec "
                             "such as bertscore:minilm (repeatable)")
    parser.add_argument("--scores", action="append", default=[], metavar="NAME=FILE",
                        help=f"precomputed scores of a metric called NAME (repeatable, mixable with --metric): {scores_help}")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="bootstrap resamples for 95%% CIs and paired tests; 0 = none (default: 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"resampling seed (default: {DEFAULT_SEED})")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--json-out", type=Path, default=None, metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--csv", type=Path, default=None, metavar="PATH", help="write the results as CSV")
    parser.add_argument("--plot", type=Path, default=None, metavar="PATH", help="bar chart with CIs (needs matplotlib)")
    parser.add_argument("--limit", type=positive_int, default=None, metavar="N",
                        help="use only the first N items (pairs, segments or documents) for a quick run")
    add_runtime_options(parser, batch_help="most items per batch of a model-based metric")


def _ties_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ties", choices=TIES_RULES, default="discordant",
                        help="a metric tie on a daRR pair: 'discordant' (WMT17-19 rule, default) or 'exclude' "
                             "(tied pairs left out); the share of ties is reported either way")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "meta", help="meta-evaluate metrics against human judgments",
        description="Correlation of metrics with human judgments, with bootstrap CIs and significance tests.",
    )
    tasks = parser.add_subparsers(dest="meta_task", metavar="DATASET", required=True)
    wmt19 = tasks.add_parser("wmt19", help="WMT19 daRR pairs (BARTScore/COMET version): Kendall's tau-like")
    _common_options(wmt19, 'JSONL {"id": <pair id>, "better": x, "worse": x}; {lp} in FILE for several pairs')
    wmt19.add_argument("--lp", action="append", default=None,
                       help="language pair, e.g. kk-en (repeatable; default: every wmt-*.jsonl in --data)")
    _ties_option(wmt19)
    wmt21 = tasks.add_parser("wmt21", help="WMT21 DA (any to-English pair): daRR tau, segment and system Pearson")
    _common_options(wmt21, "TSV system<TAB>line<TAB>score, optionally ',SYS.tsv' with system<TAB>score rows")
    wmt21.add_argument("--lp", default=None,
                       help="language pair: the folder is <data>/wmt21-<lp> unless --data is the folder itself "
                            "(default: from its src.<xx> file, else de-en)")
    wmt21.add_argument("--reference", default="A", help="reference file ref.<X>.en (default: A)")
    wmt21.add_argument("--include-human", action="store_true",
                       help="also evaluate the HUMAN translation (ref.B) as a system (default: MT systems only)")
    _ties_option(wmt21)
    summeval = tasks.add_parser("summeval", help="SummEval: summary-level Spearman/Kendall per aspect")
    _common_options(summeval, 'JSONL {"id": <document id>, "system": <name>, "score": x}')
    summeval.add_argument("--aspect", action="append", default=None,
                          help="coherence, consistency, fluency or relevance (repeatable; default: all)")
    summeval.add_argument("--refs", choices=("max", "mean", "first"), default="max",
                          help="combine scores against the several references (default: max)")
    for sub in (wmt19, wmt21, summeval):
        sub.set_defaults(func=run)


def _task_options(args: argparse.Namespace) -> dict:
    from nlgscore.meta.precomputed import parse_scores_option

    if not args.metric and not args.scores:
        fail("give at least one --metric SPEC or --scores NAME=FILE")
    if args.bootstrap < 0:
        fail("--bootstrap must be >= 0")
    check_device(args.device)
    options = dict(metrics=args.metric, scores=parse_scores_option(args.scores), bootstrap=args.bootstrap,
                   seed=args.seed, limit=args.limit, progress=progress_enabled(args),
                   load_options=runtime_settings(args))
    if args.meta_task == "wmt19":
        options.update(data_dir=args.data, pairs=args.lp, ties=args.ties)
    elif args.meta_task == "wmt21":
        options.update(data_dir=args.data, lp=args.lp, reference=args.reference,
                       include_human=args.include_human, ties=args.ties)
    else:
        options.update(data_dir=args.data, aspects=args.aspect, refs=args.refs)
    return options


def run(args: argparse.Namespace) -> int:
    from nlgscore.meta import tasks
    from nlgscore.meta.report import plot_rows, write_csv, write_json

    table = tasks.TASKS[args.meta_task](**_task_options(args))
    if args.json:
        print(json.dumps(table.to_json(), indent=2, ensure_ascii=False))
    else:
        print(table)
    if args.json_out:
        write_json(table.rows, args.json_out)
    if args.csv:
        write_csv(table.rows, args.csv)
    if args.plot:
        plot_rows(table.rows, args.plot, title=f"nlgscore meta {args.meta_task}")
    return 0
