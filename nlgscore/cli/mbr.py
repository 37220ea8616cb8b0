"""``nlgscore mbr INPUT --metric SPEC``: MBR selection or QE reranking of each item's candidates.

    nlgscore mbr items.jsonl --metric bertscore:minilm -o chosen.jsonl --matrix-out utilities.npz
    nlgscore mbr items.jsonl --metric prism:src:tests/golden/tiny-prism      # QE reranking
    nlgscore mbr items.jsonl --metric bertscore:minilm --nbest 3            # the 3 best per item

INPUT (a file or ``-``) holds one JSON object a line: ``{"id", "source"?, "candidates": [...],
"pseudo_references"?: [...]}``. Each output line is ``{"id", "best", "best_index",
"expected_utility"}`` (and with ``--nbest K`` ``"nbest": [{"index", "candidate",
"expected_utility"}, ...]``, the K best, best first), in input order, on stdout or in ``-o OUT``.
Without pseudo-references each candidate is scored against the other candidates (never itself);
ties go to the lowest index (see :mod:`nlgscore.mbr.decode`); a metric that scores with
references and sources scores each item's matrix with its source. The work is
:func:`nlgscore.mbr.decode_to_file`: items are decoded ``--chunk`` at a time; with ``-o`` every
finished chunk is checkpointed, a re-run of the same command continues where it stopped
(``--restart`` starts over), a second run on the same OUT is refused while the first holds it,
and OUT appears only when complete. ``--matrix-out`` writes every item's utility matrix to one
``.npz`` keyed by id. This module only parses and prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import (
    add_metric_option,
    add_runtime_options,
    check_device,
    fail,
    load_scorer,
    metric_option_settings,
    positive_int,
    runtime_settings,
)

DEFAULT_CHUNK = 256  # the library's default (nlgscore.mbr.to_file.DEFAULT_CHUNK), kept here so --help imports no torch


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mbr",
        help=COMMANDS["mbr"],
        description="Choose, per JSONL item, the candidate with the highest expected utility against the other candidates "
        "(or the item's pseudo_references) under a registry metric; a source-based metric (prism:src, bartscore ...:src) "
        "reranks by its score against the item's source.",
    )
    parser.add_argument(
        "input",
        metavar="INPUT",
        help='JSONL items: {"id", "source"?, "candidates", "pseudo_references"?} (\'-\' = stdin)',
    )
    parser.add_argument(
        "--metric",
        default="bertscore",
        metavar="SPEC",
        help="utility metric spec, e.g. bertscore:minilm, prism:ref:CHECKPOINT, bartscore:CHECKPOINT, prism:src (default: bertscore)",
    )
    parser.add_argument(
        "--column", default=None, help="score column used as utility (default: the metric's primary one, BERTScore F1)"
    )
    parser.add_argument(
        "--nbest",
        type=positive_int,
        default=None,
        metavar="K",
        help="also list the K best candidates of each item with their expected utilities (field nbest)",
    )
    parser.add_argument(
        "-o", "--output", default=None, metavar="OUT", help="write the JSONL choices here (resumable) instead of stdout"
    )
    parser.add_argument(
        "--matrix-out", default=None, metavar="PATH", help="write every item's utility matrix to this .npz, keyed by id"
    )
    parser.add_argument(
        "--restart", action="store_true", help="with -o: discard the checkpoint of an earlier run and start over"
    )
    parser.add_argument(
        "--chunk",
        type=positive_int,
        default=DEFAULT_CHUNK,
        help=f"items per call and checkpoint (default: {DEFAULT_CHUNK})",
    )
    add_metric_option(parser)
    add_runtime_options(parser, dtype=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore import registry
    from nlgscore.backend.distributed import launched_world_size, shard_ranks
    from nlgscore.cli.output import resume_announcer
    from nlgscore.mbr import decode_to_file

    for flag, path in (("-o", args.output), ("--matrix-out", args.matrix_out)):
        if path is not None and not Path(path).parent.is_dir():
            fail(f"{flag} {path}: folder {Path(path).parent} does not exist")
    check_device(args.device)
    options = metric_option_settings(args, args.metric, runtime_settings(args))
    progress = options.pop("progress")

    def scorer():  # built once the input file is read: a bad file fails before the model loads
        return load_scorer(lambda: registry.build(args.metric, **options), {"--metric": args.metric})

    # Launched on several processes, every rank reads the same items: each scores its share of
    # every call (sharded, the ranks' inputs compared first), rank 0 writes.
    launched = launched_world_size() > 1 and not registry.server_row(args.metric)
    if launched:
        options["shard"] = True
    ranks = shard_ranks() if launched else None
    main_process = ranks is None or ranks.is_main_process
    decode_to_file(
        scorer,
        args.input,
        args.output if args.output is not None else sys.stdout,
        matrix_out=args.matrix_out,
        column=args.column,
        nbest=args.nbest,
        chunk=args.chunk,
        restart=args.restart,
        progress=progress and main_process,
        writer=main_process,
        on_resume=None if args.output is None else resume_announcer(args, "mbr", "items"),
    )
    return 0
