"""``nlgscore score SPEC``: any metric of the registry table by its spec string, on corpora of any size.

    nlgscore score bertscore:minilm:L4 -c examples/cands.txt -r examples/refs.txt --json
    nlgscore score prism:src:tests/golden/tiny-prism -c cands.txt -s srcs.txt
    nlgscore score bertscore:minilm -i corpus.jsonl --ref-column reference -o scores.tsv

Inputs are read lazily (text files with ``-c/-r/-s``, or one JSONL/TSV/CSV/Parquet table with
``-i`` and column options) and scored ``--window`` rows per ``compute`` call, so memory does not
grow with the corpus. Without ``-o`` it prints ``<primary column>: <system value>``, then the
signature on its own line (``--seg`` first prints every line's columns, ``--json`` one JSON object). With ``-o OUT.tsv``
(or ``.jsonl``) every item's scores go to OUT as windows finish, resumably: re-running the same
command after an interruption continues where it stopped (saying so on stderr: ``resuming OUT
after N of M rows``; ``--restart`` starts over), and OUT appears only when the run is complete.
A metric added with ``nlgscore.registry.register`` is available here without any other change.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List

from nlgscore.cli import COMMANDS
from nlgscore.cli.doc_context import add_context_options, doc_ids, score_in_context
from nlgscore.cli.options import (
    add_metric_option,
    add_output_options,
    add_runtime_options,
    check_device,
    empty_input,
    fail,
    load_scorer,
    metric_option_settings,
    positive_int,
    runtime_settings,
)
from nlgscore.core.scorer_like import ScorerLike


def register(subparsers) -> None:
    from nlgscore.registry import metric_names  # the table only: no metric is imported
    from nlgscore.stream.row_windows import DEFAULT_WINDOW

    parser = subparsers.add_parser(
        "score",
        help=COMMANDS["score"],
        description="Score each candidate line with the metric named by SPEC (see nlgscore.registry: "
        "bertscore[:MODEL[:L<layer>]], prism:ref|src[:CHECKPOINT][:LANG], bartscore[:VARIANT_OR_CHECKPOINT[:DIRECTION]], "
        f"or any metric registered by a plug-in). Registered now: {', '.join(metric_names())}.",
    )
    parser.add_argument(
        "spec", metavar="SPEC", help="metric spec, e.g. bertscore:minilm:L4 or prism:ref:tests/golden/tiny-prism"
    )
    files = parser.add_argument_group("inputs: text files (one segment a line) or one table (-i)")
    files.add_argument("-c", "--cands", default=None, metavar="FILE", help="candidate file ('-' = stdin)")
    files.add_argument(
        "-r",
        "--refs",
        action="append",
        default=None,
        metavar="FILE",
        help="reference file; repeat for multiple references",
    )
    files.add_argument("-s", "--srcs", default=None, metavar="FILE", help="source file")
    files.add_argument(
        "-i",
        "--input",
        default=None,
        metavar="TABLE",
        help="a .jsonl, .tsv, .csv or .parquet file with one row per item",
    )
    files.add_argument(
        "--input-format",
        default=None,
        choices=("jsonl", "tsv", "csv", "parquet"),
        help="format of -i (default: from its extension)",
    )
    files.add_argument(
        "--pred-column", default="prediction", help="column of -i holding the candidate (default: prediction)"
    )
    files.add_argument(
        "--ref-column",
        action="append",
        default=None,
        metavar="NAME",
        help="column of -i holding the reference, or a list of them; repeat for one reference per column (default: reference)",
    )
    files.add_argument("--src-column", default=None, metavar="NAME", help="column of -i holding the source")
    files.add_argument("--no-refs", action="store_true", help="-i has no reference column (source-based metrics)")
    parser.add_argument(
        "--lang",
        default=None,
        help="language of the candidates, for metrics that take one (Prism: the target "
        "language tag; also a spec part, prism:src:CHECKPOINT:de; default: the metric's, en)",
    )
    add_metric_option(parser)
    add_output_options(parser)
    add_context_options(parser)
    run_group = parser.add_argument_group("corpus runs")
    run_group.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="OUT",
        help="write every item's scores to OUT (.tsv with a header line, or .jsonl) as they finish; resumable",
    )
    run_group.add_argument(
        "--restart", action="store_true", help="with -o: discard the checkpoint of an earlier run and start over"
    )
    run_group.add_argument(
        "--window",
        type=positive_int,
        default=DEFAULT_WINDOW,
        help=f"rows per compute call: de-duplication and length sorting happen within it; memory grows with it "
        f"(default: {DEFAULT_WINDOW})",
    )
    add_runtime_options(parser, dtype=True)
    parser.set_defaults(func=run)


def read_corpus(args: argparse.Namespace) -> Any:
    """The :class:`~nlgscore.stream.readers.Inputs` the command line names (nothing read yet); an
    input without rows is refused naming it (:func:`not_empty`)."""
    from nlgscore.stream import readers

    args.items_by_line = True  # item i is line i + 1 of -c/-r/-s, row i + 1 of -i: errors name it so
    if args.input is not None:
        if args.cands or args.refs or args.srcs:
            fail("give either -i TABLE or text files (-c/-r/-s), not both")
        refs = None if args.no_refs else (args.ref_column or ["reference"])
        return not_empty(
            readers.table_file(
                args.input,
                format=args.input_format,
                prediction_column=args.pred_column,
                reference_column=refs,
                source_column=args.src_column,
            )
        )
    if args.cands is None:
        fail("give the candidates: -c FILE (with -r/-s files) or -i TABLE")
    if not args.refs and not args.srcs:
        fail("give references (-r) or sources (-s)")
    return not_empty(readers.text_files(args.cands, args.refs or [], args.srcs))


def not_empty(inputs: Any) -> Any:
    """``inputs`` whose rows end the command with an error naming the input when there are none.
    Files on disk are checked now (one row read), before any model loads or output is started;
    stdin and pipes, which can be read only once, when their first row is due."""
    from nlgscore.stream.readers import Inputs, is_regular_file

    def rows() -> Any:
        iterator = inputs.rows()
        first = next(iterator, None)
        if first is None:
            fail(empty_input(inputs.label))
        yield first
        yield from iterator

    if all(is_regular_file(path) for _, path in inputs.files) and next(inputs.rows(), None) is None:
        fail(empty_input(inputs.label))
    return Inputs(
        rows,
        files=inputs.files,
        references=inputs.has_references,
        sources=inputs.has_sources,
        label=inputs.label,
        fingerprint=inputs.fingerprint,
    )


def run(args: argparse.Namespace) -> int:
    from nlgscore import registry
    from nlgscore.backend.distributed import launched_world_size, shard_ranks

    registry.parse_spec(args.spec)  # an unknown metric fails before any file is read
    inputs = read_corpus(args)
    ids = doc_ids(args)
    check_device(args.device)
    options = runtime_settings(args)
    progress = options["progress"]
    options["progress"] = progress and args.output is None  # a corpus run draws one bar over items, not one per window
    if args.lang is not None:
        options["lang"] = args.lang
    options = metric_option_settings(args, args.spec, options)
    # Launched on several processes, every rank reads the same files: each scores its share of
    # every call (sharded, the ranks' inputs compared first), rank 0 writes.
    launched = launched_world_size() > 1 and not registry.server_row(args.spec)
    if launched:
        options["shard"] = True
    scorer = load_scorer(lambda: registry.build(args.spec, **options), {"SPEC": args.spec})
    ranks = shard_ranks() if launched else None
    main_process = ranks is None or ranks.is_main_process
    if args.output is not None:
        from nlgscore.cli.output import emit, output_format, resume_announcer
        from nlgscore.stream.to_file import score_to_file

        settings = {"spec": args.spec, "inputs": _describe_inputs(args)}
        summary = score_to_file(
            scorer,
            inputs,
            args.output,
            window=args.window,
            restart=args.restart,
            settings=settings,
            progress=progress and main_process,
            writer=main_process,
            on_resume=resume_announcer(args, "score"),
        )
        if main_process:
            emit(summary, output_format(args))
        return 0
    result = (
        _score_in_windows(scorer, inputs, args.window) if ids is None else score_in_context(scorer, inputs, args, ids)
    )
    if main_process:
        from nlgscore.cli.output import print_result

        print_result(result, args)
    return 0


def _describe_inputs(args: argparse.Namespace) -> str:
    """The input options as given (columns, formats): part of the checkpoint's identity."""
    if args.input is not None:
        return (
            f"-i {args.input} format={args.input_format} pred={args.pred_column} refs={args.ref_column} "
            f"src={args.src_column} no_refs={args.no_refs}"
        )
    return f"-c {args.cands} -r {args.refs} -s {args.srcs}"


def _score_in_windows(scorer: ScorerLike, inputs: Any, window: int) -> Any:
    """One Result for the whole corpus, computed window by window (only the scores are kept; a
    string metric's windows keep their corpus statistics too, so that its system value is the
    corpus statistic of every line, not of the last window)."""
    import numpy as np

    from nlgscore.core.result import Result
    from nlgscore.stream.row_windows import score_chunk, score_windows
    from nlgscore.strings.result import StringResult

    parts: Dict[str, List[Any]] = {}
    corpus: List[Any] = []
    last = None
    for _, last in score_windows(scorer, inputs, window=window):
        if isinstance(last, StringResult):
            corpus.append(last)
            continue
        for column, values in last.columns().items():
            parts.setdefault(column, []).append(np.asarray(values, dtype=np.float64))
    if last is None:  # no rows: the scorer's own empty result, with its columns
        return score_chunk(scorer, [], inputs)
    if corpus:
        return StringResult.concat(corpus)
    return Result(
        last.signature,
        {k: np.concatenate(v, axis=-1) for k, v in parts.items()},
        last.primary,
        getattr(last, "layer", None),
    )
