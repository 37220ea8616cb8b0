"""``nlgscore mbr INPUT --metric SPEC``: MBR selection or QE reranking of each item's candidates.

    nlgscore mbr items.jsonl --metric bertscore:minilm -o chosen.jsonl --matrix-out utilities.npz
    nlgscore mbr items.jsonl --metric prism:src:tests/golden/tiny-prism      # QE reranking

INPUT (a file or ``-``) holds one JSON object a line: ``{"id", "source"?, "candidates": [...],
"pseudo_references"?: [...]}``. Each output line is ``{"id", "best", "best_index",
"expected_utility"}``, in input order, on stdout or in ``-o OUT``. Without pseudo-references each
candidate is scored against the other candidates (never itself); ties go to the lowest index (see
:mod:`nlgscore.mbr.decode`). Items are decoded ``--chunk`` at a time; with ``-o`` every finished
chunk is checkpointed, a re-run of the same command continues where it stopped (``--restart``
starts over) and OUT appears only when complete. ``--matrix-out`` writes every item's utility
matrix to one ``.npz`` keyed by id.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import add_runtime_options, check_device, fail, load_scorer, positive_int, runtime_settings

DEFAULT_CHUNK = 256  # items per decode call and per checkpoint


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mbr", help=COMMANDS["mbr"],
        description="Choose, per JSONL item, the candidate with the highest expected utility against the other candidates "
        "(or the item's pseudo_references) under a registry metric; a source-based metric (prism:src, bartscore ...:src) "
        "reranks by its score against the item's source.",
    )
    parser.add_argument("input", metavar="INPUT", help="JSONL items: {\"id\", \"source\"?, \"candidates\", \"pseudo_references\"?} ('-' = stdin)")
    parser.add_argument("--metric", default="bertscore", metavar="SPEC",
                        help="utility metric spec, e.g. bertscore:minilm, prism:ref:CHECKPOINT, bartscore:CHECKPOINT, prism:src (default: bertscore)")
    parser.add_argument("--column", default=None, help="score column used as utility (default: the metric's primary one, BERTScore F1)")
    parser.add_argument("-o", "--output", default=None, metavar="OUT", help="write the JSONL choices here (resumable) instead of stdout")
    parser.add_argument("--matrix-out", default=None, metavar="PATH", help="write every item's utility matrix to this .npz, keyed by id")
    parser.add_argument("--restart", action="store_true", help="with -o: discard the checkpoint of an earlier run and start over")
    parser.add_argument("--chunk", type=positive_int, default=DEFAULT_CHUNK, help=f"items per call and checkpoint (default: {DEFAULT_CHUNK})")
    add_runtime_options(parser, dtype=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore import registry
    from nlgscore.core.resumable import ResumableOutput, kernel_in_use, same_kernel
    from nlgscore.mbr import decode
    from nlgscore.mbr.files import jsonl_rows, merge_parts, parts_folder, read_items, save_part

    for flag, path in (("-o", args.output), ("--matrix-out", args.matrix_out)):
        if path is not None and not Path(path).parent.is_dir():
            fail(f"{flag} {path}: folder {Path(path).parent} does not exist")
    items, digest = read_items(args.input)
    check_device(args.device)
    scorer = load_scorer(lambda: registry.build(args.metric, **runtime_settings(args)), {"--metric": args.metric})
    writer = None
    if args.output is not None:
        identity = {"input": f"sha256={digest}", "metric": str(scorer.signature), "column": args.column,
                    "chunk": args.chunk, "matrix_out": args.matrix_out}
        writer = ResumableOutput(args.output, identity, restart=args.restart)
    start = writer.done if writer is not None else 0
    if args.matrix_out is not None and start == 0:
        shutil.rmtree(parts_folder(args.matrix_out), ignore_errors=True)  # parts of another run
    # A resumed run computes with the CPU kernel of the run it continues (same bits as one run).
    kernel = (writer.state.get("kernel") if writer is not None else None) or kernel_in_use(scorer)
    with same_kernel(kernel):
        for first in range(start, len(items), args.chunk):
            chunk = items[first:first + args.chunk]
            choices = decode(scorer, chunk, column=args.column, keep_matrices=args.matrix_out is not None)
            if args.matrix_out is not None:
                save_part(args.matrix_out, first, choices)
            if writer is not None:
                writer.append(jsonl_rows(choices), len(chunk), state={"kernel": kernel})
            else:
                sys.stdout.write(jsonl_rows(choices))
                sys.stdout.flush()
    if writer is not None:
        writer.finish()
    if args.matrix_out is not None:
        merge_parts(args.matrix_out, len(items))
    return 0
