"""``nlgscore bertscore``: BERTScore of a candidate file against one or more reference files.

    nlgscore bertscore --model minilm -c examples/cands.txt -r examples/refs.txt --seg

Prints the system line ``P: 0.xxxxxx R: 0.xxxxxx F1: 0.xxxxxx``, then the signature on its own line;
``--seg`` first prints ``P<TAB>R<TAB>F`` per line, ``--json`` one JSON object instead. bert-score's own spellings
(``--model_type``, ``--num_layers``, ``--rescale_with_baseline``, ``--batch_size``, ``-v``) work too.
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
    positive_int,
    read_inputs,
    runtime_settings,
)

LABELS = {"precision": "P", "recall": "R", "f1": "F1"}


class _NoSources(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        parser.error("bertscore takes no sources file (-s); for every line's scores use --seg (bert-score's -s)")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bertscore",
        help=COMMANDS["bertscore"],
        description="Score each candidate line against the same line of every reference file "
        "(several -r files = multiple references, the best one counts). '-' reads a file from stdin.",
    )
    add_input_options(parser, references_required=True, sources=False)
    parser.add_argument("-s", "--srcs", nargs="?", action=_NoSources, help=argparse.SUPPRESS)
    parser.add_argument(
        "-m",
        "--model",
        "--checkpoint",
        "--model_type",
        "--model-type",
        dest="model",
        default=None,
        help="model id, folder or alias (e.g. minilm); default: by --lang",
    )
    parser.add_argument(
        "-l",
        "--num-layers",
        "--num_layers",
        dest="num_layers",
        type=int,
        default=None,
        help="layer to use (default: the model's tuned layer; 0 = embeddings)",
    )
    parser.add_argument("--lang", default=None, help="language code: picks the default model and baseline")
    parser.add_argument("--idf", action="store_true", help="idf weighting from the references")
    parser.add_argument(
        "--rescale",
        "--rescale-with-baseline",
        "--rescale_with_baseline",
        dest="rescale",
        action="store_true",
        help="rescale with the baseline (needs --lang or --baseline-path; minilm: English by default)",
    )
    parser.add_argument(
        "--baseline-path",
        "--baseline_path",
        dest="baseline_path",
        default=None,
        help="baseline file (LAYER,P,R,F rows)",
    )
    parser.add_argument(
        "--max-length",
        "--max_length",
        dest="max_length",
        type=positive_int,
        default=None,
        help="tokens per encoder pass (default: the model's limit, e.g. 512)",
    )
    parser.add_argument(
        "--window-stride",
        dest="window_stride",
        type=positive_int,
        default=None,
        help="with --long-inputs auto: content tokens between overlapping windows (default: half a window)",
    )
    parser.add_argument(
        "--calibration",
        default=None,
        metavar="FILE",
        help="calibration file of `nlgscore calibrate`: the model's layer and (with --rescale) baseline",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="bert-score's -v: show progress (the default here)"
    )
    add_output_options(parser)
    add_runtime_options(
        parser,
        batch_help="most sentences per batch (default: token budget only)",
        tokens_help="padded tokens per batch (default: 2048 on CPU)",
    )
    # bert-score's spelling of --batch-size
    parser.add_argument("--batch_size", dest="batch_size", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.cli.output import print_result

    cands, refs, _ = read_inputs(args)
    if args.num_layers is not None and args.num_layers < 0:
        fail(f"--num-layers must be 0 (embeddings) or a layer number, got {args.num_layers}")
    if args.batch_size is not None and args.batch_size < 1:
        fail(f"--batch-size must be a positive integer, got {args.batch_size}")
    check_device(args.device)

    def build():
        from nlgscore.registry import build

        return build(
            "bertscore",
            model_type=args.model,
            num_layers=args.num_layers,
            lang=args.lang,
            idf=args.idf,
            rescale_with_baseline=args.rescale,
            baseline_path=args.baseline_path,
            max_length=args.max_length,
            calibration=args.calibration,
            **({} if args.window_stride is None else {"window_stride": args.window_stride}),
            **runtime_settings(args),
        )

    scorer = load_scorer(build, {"--model": args.model})
    result = scorer.compute(cands, refs)
    print_result(result, args, LABELS)
    return 0
