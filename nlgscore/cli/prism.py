"""``nlgscore prism``: Prism-ref (with -r) or Prism-src (with -s) of a candidate file.

    nlgscore prism -c cands.txt -r refs.txt --lang en --checkpoint tests/golden/tiny-prism --seg

Prints ``Prism-ref: -x.xxxxxx`` (the mean over lines, natural-log probabilities), then the signature;
``--seg`` first prints each line's score, ``--json`` one JSON object with every column.
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
    parser = subparsers.add_parser(
        "prism",
        help=COMMANDS["prism"],
        description="Score each candidate line against the same line of the reference file (Prism-ref, "
        "both directions averaged; several -r files = mean over references) or of the source file (Prism-src).",
    )
    add_input_options(parser)
    parser.add_argument("--lang", default="en", help="language of the candidates (default: en)")
    parser.add_argument(
        "--checkpoint",
        "--model",
        "-m",
        dest="checkpoint",
        default=None,
        help="Hub id or folder (default: the m39v1 model, dariast/prism)",
    )
    parser.add_argument("--revision", default=None, help="Hub revision of --checkpoint")
    parser.add_argument("--temperature", type=float, default=1.0, help="softmax temperature (default: 1.0)")
    add_output_options(parser)
    add_runtime_options(parser, tokens_help="encoder + decoder tokens per batch")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.cli.output import print_result

    if bool(args.refs) == bool(args.srcs):
        fail("give references (-r, Prism-ref) or a source file (-s, Prism-src), not both and not neither")
    cands, refs, srcs = read_inputs(args)
    check_device(args.device)
    mode = "src" if srcs is not None else "ref"

    def build():
        from nlgscore.registry import build

        return build(
            f"prism:{mode}",
            checkpoint=args.checkpoint,
            lang=args.lang,
            temperature=args.temperature,
            revision=args.revision,
            **runtime_settings(args),
        )

    scorer = load_scorer(build, {"--checkpoint": args.checkpoint, "--revision": args.revision})
    result = scorer.compute(cands, references=refs, sources=srcs)
    print_result(result, args, {result.primary: f"Prism-{mode}"})
    return 0
