"""``nlgscore bartscore``: BARTScore of a candidate file against references and/or sources.

    nlgscore bartscore -c cands.txt -r refs.txt --checkpoint tests/golden/tiny-bart --seg

Prints ``BARTScore: -x.xxxxxx`` (the mean over lines), then the signature; ``--seg`` first prints each
line's score (with precision and recall for ``--direction f|harmonic``), ``--json`` one JSON object.
"""

from __future__ import annotations

import argparse

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import (
    add_input_options,
    add_output_options,
    add_runtime_options,
    check_device,
    fail,
    load_scorer,
    read_inputs,
    runtime_settings,
)


def register(subparsers) -> None:
    from nlgscore.seq2seq.bartscore import AGGREGATIONS, DIRECTIONS, PROMPT_SIDES  # numpy only, no torch

    parser = subparsers.add_parser(
        "bartscore",
        help=COMMANDS["bartscore"],
        description="Score each candidate line against the same line of every reference file (several -r "
        "files = multiple references, aggregated with --agg) or, with --direction src, of the source file.",
    )
    add_input_options(parser)
    parser.add_argument(
        "--variant", default="bart-large-cnn", help="bart-large, bart-large-cnn (default), bart-large-cnn-para"
    )
    parser.add_argument(
        "--checkpoint",
        "--model",
        "-m",
        dest="checkpoint",
        default=None,
        help="Hub id or folder replacing the variant's weights",
    )
    parser.add_argument(
        "--para-weights", default=None, help="ParaBank2 bart.pth (file or Hub repo) for bart-large-cnn-para"
    )
    parser.add_argument("--direction", choices=DIRECTIONS, default=None, help="default: src with -s and no -r, else f")
    parser.add_argument("--prompt", default=None, help="a prompt, or ref_hyp / src_hyp for the paper's prompt sets")
    parser.add_argument(
        "--prompt-side", choices=PROMPT_SIDES, default="encoder", help="encoder suffix or decoder prefix"
    )
    parser.add_argument("--agg", choices=AGGREGATIONS, default="mean", help="over multiple references (default: mean)")
    add_output_options(parser)
    add_runtime_options(parser, tokens_help="encoder + decoder tokens per batch")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.cli.output import print_result

    cands, refs, srcs = read_inputs(args)
    direction = args.direction or ("src" if srcs is not None and refs is None else "f")
    if direction == "src" and srcs is None:
        fail("--direction src needs a source file (-s)")
    if direction != "src" and refs is None:
        fail(f"--direction {direction} needs at least one reference file (-r)")
    check_device(args.device)

    def build():
        from nlgscore.registry import build

        return build(
            "bartscore",
            checkpoint=args.checkpoint,
            variant=args.variant,
            para_weights=args.para_weights,
            direction=direction,
            **runtime_settings(args),
        )

    chosen = {
        "--checkpoint": args.checkpoint,
        "--variant": None if args.checkpoint else args.variant,
        "--para-weights": args.para_weights,
    }
    scorer = load_scorer(build, chosen)
    result = scorer.compute(cands, refs, sources=srcs, prompt=args.prompt, prompt_side=args.prompt_side, agg=args.agg)
    primary = result.primary
    seg = [primary] + [name for name in ("precision", "recall") if name in result.columns()]
    print_result(result, args, {primary: "BARTScore"}, seg_columns=seg)
    return 0
