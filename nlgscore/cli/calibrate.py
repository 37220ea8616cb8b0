"""``nlgscore calibrate``: choose a model's BERTScore layer and compute its rescale baseline.

    nlgscore calibrate MODEL --data data/wmt21-de-en -o MODEL.calibration.json

Runs :mod:`nlgscore.calibration.recipe` (the BERTScore paper's recipe), prints every layer's
criterion and writes one calibration file; then ``nlgscore bertscore -m MODEL --calibration FILE``
(or ``BERTScorer(model_type=MODEL, calibration=FILE)``) uses the layer, and ``--rescale`` its baseline.
"""

from __future__ import annotations

import argparse
import re

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import add_runtime_options, check_device, load_scorer, positive_int, runtime_settings


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help=COMMANDS["calibrate"],
        description="Score every layer of MODEL on a human-scores folder, pick the layer whose F correlates best "
        "(segment Pearson) with the human scores, compute the rescale baseline from random pairs of its references, "
        "and write one calibration file for --calibration / calibration=.",
    )
    parser.add_argument(
        "model", metavar="MODEL", help="model id, folder or alias (e.g. minilm, a ModernBERT or Qwen3-Embedding folder)"
    )
    parser.add_argument(
        "--data",
        required=True,
        metavar="FOLDER",
        help="validation folder: WMT21-style DA (da-seg-scores.csv) or a human-scores folder (MQM, DA)",
    )
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="calibration file to write (default: <model name>.calibration.json here)",
    )
    parser.add_argument(
        "--pairs", type=positive_int, default=None, help="random reference pairs for the baseline (default: 24000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the baseline's pairs (default: 1)")
    parser.add_argument("--limit", type=positive_int, default=None, help="first N segments only (a quick run)")
    parser.add_argument("--ref", default=None, help="reference to use when the folder has several (default: A)")
    parser.add_argument("--include-human", action="store_true", help="also score human translations as systems")
    parser.add_argument(
        "--max-length", type=positive_int, default=None, help="tokens per encoder pass (default: the model's)"
    )
    add_runtime_options(parser, batch_help="most sentences per batch (default: token budget only)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.calibration.recipe import DEFAULT_PAIRS, calibrate
    from nlgscore.meta.stats.resample import check_seed

    check_device(args.device)
    check_seed(args.seed)  # numpy's generator takes seeds >= 0: refused before the model loads
    options = {**runtime_settings(args), **({} if args.max_length is None else {"max_length": args.max_length})}

    def build():
        return calibrate(
            args.model,
            args.data,
            pairs=args.pairs or DEFAULT_PAIRS,
            seed=args.seed,
            limit=args.limit,
            include_human=args.include_human,
            reference=args.ref,
            **options,
        )

    fields, validation = load_scorer(build, {"MODEL": args.model})
    output = args.output or re.sub(r"[^A-Za-z0-9._-]+", "_", fields["model"]) + ".calibration.json"
    from nlgscore.bertscore.calibration_file import write_calibration

    write_calibration(output, fields)
    print(f"{fields['model']} on {validation.name}: {validation.criterion} per layer")
    for layer, r in enumerate(fields["correlations"]):
        print(f"  layer {layer:2d}  r = {r:.4f}" + ("  <- chosen" if layer == fields["layer"] else ""))
    print(
        f"baseline: {fields['baseline_pairs']} random pairs of {fields['baseline_sentences']} references (seed {fields['seed']})"
    )
    print(f"wrote {output}: use it with --calibration {output} (calibration= in Python)")
    return 0
