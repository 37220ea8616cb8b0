"""``nlgscore meta``: correlation of metrics with human judgments on standard data sets.

    nlgscore meta wmt19 --lp kk-en --metric chrf --metric sentbleu --json-out out.json
    nlgscore meta wmt21 --data data/wmt21-de-en --metric chrf --scores mine=mine.tsv
    nlgscore meta summeval --metric rouge1 --metric chrf --aspect coherence
    nlgscore meta mqm --data data/mqm-wmt21-zh-en --metric chrf --metric bleu
    nlgscore meta wmt24 --data data/esa-wmt24-en-cs --metric chrf --metric bertscore:minilm
    nlgscore meta wmt24 --data data/esa-wmt24-en-cs --metric bertscore:minilm --context 2
    nlgscore meta wmt21 --data data/wmt21-de-en --metric chrf --top-k 4
    nlgscore meta select-model wmt21 --data data/wmt21-de-en --metric chrf --metric sentbleu

One subcommand per data-set descriptor (``nlgscore.meta.tasks.descriptors``): the options every task
takes, then the descriptor's own. The tasks validate their arguments and return a ``MetaTable``;
this module only builds the parser, prints through ``emit`` and writes the output files. An
interrupted run (Ctrl-C, an error in one metric) still prints and writes the finished metrics'
rows, and their scores stay in the score cache, so the re-run only scores what is missing.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Tuple

from nlgscore import envs
from nlgscore.cli.options import (
    add_format_option,
    add_runtime_options,
    check_device,
    positive_int,
    progress_enabled,
    runtime_settings,
)
from nlgscore.cli.output import emit, output_format
from nlgscore.errors import ArgumentError
from nlgscore.meta.tasks.descriptors import DESCRIPTORS, MetaCommand

if TYPE_CHECKING:
    from nlgscore.meta.tasks.options import RunOptions

DATA_HELP = "data folder (default: $NLGSCORE_DATA, else $XDG_DATA_HOME/nlgscore, else ~/.cache/nlgscore/data)"


def default_cache() -> Path:
    """Where meta runs keep computed scores: ``$NLGSCORE_CACHE/meta-scores``, else the per-user cache."""
    return envs.cache_folder("meta-scores")


def _common_options(parser: argparse.ArgumentParser, descriptor: MetaCommand, top_k: bool = True) -> None:
    folder = descriptor.data_param in ("folder", "data")  # a folder the data set is, not one it is found in
    parser.add_argument(
        "--data", type=Path, default=None, required=folder, help="the human-scores folder" if folder else DATA_HELP
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        help="registry metric spec: chrf, bleu, sentbleu, rouge1/rouge2/rougeL, bertscore:minilm, "
        "a server URL ... (repeatable)",
    )
    parser.add_argument(
        "--scores",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="precomputed scores of a metric called NAME (repeatable, mixable with --metric): "
        f"{descriptor.scores_help}",
    )
    parser.add_argument(
        "--lower-is-better",
        action="append",
        default=[],
        metavar="NAME",
        help="the metric NAME (of --scores NAME=FILE, or a --metric spec) scores errors: lower is better; "
        "its scores are negated before every measure (repeatable; registry metrics that say so, TER, "
        "are negated without it)",
    )
    if descriptor.top_k and top_k:
        parser.add_argument(
            "--top-k",
            type=int,
            default=None,
            metavar="K",
            help="also compute every system-level measure over the K best systems by human score "
            "(rows <measure>-topK; Prism and BARTScore report K=4)",
        )
    if descriptor.resampling == "bootstrap":
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=1000,
            metavar="N",
            help="bootstrap resamples for 95%% CIs and paired tests; 0 = none (default: 1000)",
        )
    else:
        parser.add_argument(
            "--permutations",
            type=int,
            default=1000,
            metavar="N",
            help="resamples of the permutation tests between metrics (significance clusters); "
            "0 = none (default: 1000, as mt-metrics-eval)",
        )
    seed = descriptor.seed
    parser.add_argument("--seed", type=int, default=seed, help=f"resampling seed (default: {seed})")
    add_format_option(parser)
    parser.add_argument("--json-out", type=Path, default=None, metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--csv", type=Path, default=None, metavar="PATH", help="write the results as CSV")
    parser.add_argument(
        "--plot", type=Path, default=None, metavar="PATH", help="chart of the results (needs matplotlib)"
    )
    parser.add_argument(
        "--export-scores",
        type=Path,
        default=None,
        metavar="DIR",
        help="write every score computed as nlgscore JSONL (and mt-metrics-eval files where the "
        "data set has systems) to DIR",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"keep computed scores here and reuse them on a re-run (default: {default_cache()})",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    parser.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="use only the first N items (pairs, segments or documents) for a quick run",
    )
    parser.add_argument(
        "--context",
        type=int,
        default=0,
        metavar="K",
        help="score each segment after the previous K segments of its document, documents from the data set "
        "(BERTScore, Prism, BARTScore; wmt24 and wmt25 data with document ids; default: 0, sentence level)",
    )
    add_runtime_options(parser, batch_help="most items per batch of a model-based metric")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "meta",
        help="meta-evaluate metrics against human judgments",
        description="Meta-evaluate metrics against human judgments: WMT19 daRR, WMT21 DA, SummEval and any "
        "MQM/DA human-scores folder (WMT22-25 measures: pairwise accuracy, SPA, acc-t), and "
        "WMT24/WMT25 as mt-metrics-eval runs them (SPA, acc-eq, avg-corr over pairs), with "
        "bootstrap CIs or permutation tests.",
    )
    tasks = parser.add_subparsers(dest="meta_task", metavar="DATASET", required=True)
    for descriptor in DESCRIPTORS.values():
        description = (
            f"{descriptor.description} Data: {descriptor.files}. Human judgments: {descriptor.human}; reference: "
            f"{descriptor.reference}; levels: {', '.join(descriptor.levels)}."
        )
        _task_parser(tasks, descriptor, descriptor.help, description)
    _register_select_model(tasks)


def _task_parser(subparsers, descriptor: MetaCommand, help: str, description: str, top_k: bool = True):
    """The subcommand of one data set: the options every task takes, then the descriptor's own."""
    sub = subparsers.add_parser(descriptor.name, help=help, description=description)
    _common_options(sub, descriptor, top_k=top_k)
    for option in descriptor.options:
        sub.add_argument(*option.flags, dest=option.param, help=option.help, **option.settings)
    sub.set_defaults(func=run, descriptor=descriptor)
    return sub


def _register_select_model(tasks) -> None:
    from nlgscore.meta.tasks import select_model as sm

    parser = tasks.add_parser(
        "select-model",
        help="model selection over hybrid systems: Hits@1, MRR and Diff (BERTScore paper)",
        description="Model selection as the BERTScore paper runs it: hybrid systems super-sampled from a data "
        "set's systems (each segment from one of two random systems; human and metric scores the segments' "
        "means), then SAMPLE hybrids drawn REPEATS times; per metric, Hits@1 (its pick is the human best), "
        "MRR (of the pick's human rank) and Diff (human best minus the pick's human score).",
    )
    chosen = parser.add_subparsers(dest="selection_task", metavar="DATASET", required=True)
    for descriptor in DESCRIPTORS.values():
        if not descriptor.hybrids:
            continue
        description = f"Model selection on hybrids of {descriptor.name}. Data: {descriptor.files}."
        sub = _task_parser(chosen, descriptor, f"hybrids of {descriptor.name}", description, top_k=False)
        if not any("--hybrids" in option.flags for option in descriptor.options):  # the package tasks' own
            sub.add_argument(
                "--hybrids",
                type=positive_int,
                default=sm.HYBRIDS,
                metavar="N",
                help=f"hybrid systems (default: {sm.HYBRIDS})",
            )
        sub.add_argument(
            "--sample-size",
            type=positive_int,
            default=sm.SAMPLE_SIZE,
            metavar="N",
            help=f"hybrids drawn per repeat (default: {sm.SAMPLE_SIZE})",
        )
        sub.add_argument(
            "--repeats",
            dest="draws",
            type=positive_int,
            default=sm.REPEATS,
            metavar="N",
            help=f"draws (default: {sm.REPEATS})",
        )
        sub.set_defaults(select_model=True)


def _task_options(args: argparse.Namespace) -> Tuple[Dict[str, Any], "RunOptions"]:
    """The task's own keywords, and the run settings as one ``RunOptions`` (checked once, here)."""
    from nlgscore.meta.data.precomputed import parse_scores_option
    from nlgscore.meta.engine import ScoreCache, Scorers
    from nlgscore.meta.tasks.generic import check_context
    from nlgscore.meta.tasks.options import RUN_OPTIONS, RunOptions

    descriptor: MetaCommand = args.descriptor
    check_device(args.device)
    check_context(args.context, descriptor.name, descriptor.documents)  # every task, before any work
    cache = None
    if not args.no_cache:
        try:
            cache = ScoreCache(args.cache or default_cache())
        except OSError as err:
            if args.cache is not None:
                raise ArgumentError(f"--cache {args.cache}: cannot create the folder ({err.strerror})") from None
            warnings.warn(
                f"score cache off: cannot create {default_cache()} ({err.strerror}); pass --cache DIR", stacklevel=2
            )
    scorers = Scorers(runtime_settings(args), cache=cache, record=args.export_scores is not None)
    settings: Dict[str, Any] = dict(seed=args.seed, limit=args.limit, progress=progress_enabled(args), scorers=scorers)
    settings[descriptor.resampling] = getattr(args, descriptor.resampling)
    if descriptor.systems:
        settings["export_scores"] = args.export_scores
    if descriptor.documents:
        settings["context"] = args.context
    if args.lower_is_better:
        settings["lower_is_better"] = args.lower_is_better
    if getattr(args, "top_k", None) is not None:
        settings["top_k"] = args.top_k
    if getattr(args, "select_model", False):
        from nlgscore.meta.tasks.select_model import SelectModel

        settings["select_model"] = SelectModel(args.hybrids, args.sample_size, args.draws, args.seed)
    own: Dict[str, Any] = dict(metrics=args.metric, scores=parse_scores_option(args.scores))
    own[descriptor.data_param] = args.data
    for option in descriptor.options:  # a data set's own flag may fill a run setting (--export-mtme)
        (settings if option.param in RUN_OPTIONS else own)[option.param] = getattr(args, option.param)
    return own, RunOptions(**settings)


def _write(table, args: argparse.Namespace, scorers) -> None:
    from nlgscore.corpus.outputs.resumable import write_atomic
    from nlgscore.meta.report import csv_text, json_text

    if args.json_out:
        write_atomic(args.json_out, json_text(table.rows))
    if args.csv:
        write_atomic(args.csv, csv_text(table.rows))
    if args.plot:
        from nlgscore.meta.plot import plot_correlations

        plot_correlations(table.to_dict(), str(args.plot), title=f"nlgscore meta {args.meta_task}")
    if args.export_scores:
        scorers.export(args.export_scores)


def run(args: argparse.Namespace) -> int:
    from nlgscore.meta.data.files import check_writable

    check_writable([args.json_out, args.csv, args.plot])  # before the work, not after it
    if args.plot:
        from nlgscore.backend.extras import require

        require("matplotlib", "plot", "--plot")  # a missing extra is found now, not after the scoring
    for folder in (args.export_scores, getattr(args, "export_mtme", None)):
        if folder is not None:  # the folder itself, or the one it will be created in
            check_writable([folder / "x"] if folder.is_dir() else [folder])
    own, options = _task_options(args)
    try:
        table = args.descriptor.task(**own, options=options)
    except BaseException as err:
        partial = getattr(err, "partial_table", None)
        if partial is not None and partial.rows:
            emit(partial, output_format(args))
            _write(partial, args, options.scorers)
        raise
    emit(table, output_format(args))
    _write(table, args, options.scorers)
    return 0
