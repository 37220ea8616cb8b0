"""``nlgscore show``: the token-similarity heat map of one candidate/reference pair.

    nlgscore show -c "it is freezing today" -r "the weather is cold today" --model minilm -o pair.png

``-c``/``-r`` are the sentences themselves (never file names, unlike bert_score's CLI where a
missing file silently became a sentence). ``--idf`` needs ``--idf-sents FILE``: idf weights come
from document frequencies over a corpus, and one or two sentences give meaningless weights.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nlgscore.cli import COMMANDS


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "show", help=COMMANDS["show"],
        description="Draw the BERTScore token-similarity matrix of one candidate/reference pair, with "
        "each token's greedy match marked in both directions (the BERTScore paper's Figure 1).",
    )
    parser.add_argument("-c", "--cand", required=True, help="the candidate sentence (text, not a file)")
    parser.add_argument("-r", "--ref", required=True, help="the reference sentence (text, not a file)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="image file to write (.png, .pdf, .svg)")
    parser.add_argument("-m", "--model", default=None, help="model id, folder or alias (e.g. minilm); default: by --lang")
    parser.add_argument("-l", "--num-layers", type=int, default=None, help="layer to use (default: the model's tuned layer)")
    parser.add_argument("--lang", default=None, help="language code: picks the default model and baseline (default: en)")
    parser.add_argument("--idf", action="store_true", help="weight tokens by idf (needs --idf-sents) and show the weights")
    parser.add_argument("--idf-sents", type=Path, default=None, help="file of reference sentences, one a line, for the idf weights")
    parser.add_argument("--rescale", action="store_true", help="rescale similarities with the F1 baseline (needs --lang)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.bertscore import BERTScorer
    from nlgscore.bertscore.plot import plot_pair

    if args.idf and args.idf_sents is None:
        raise ValueError("--idf needs --idf-sents FILE: idf weights are document frequencies over a corpus of references")
    if args.idf_sents is not None and not args.idf:
        raise ValueError("--idf-sents is only used with --idf")
    idf_sents = None
    if args.idf_sents is not None:
        idf_sents = [line.strip() for line in args.idf_sents.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not idf_sents:
            raise ValueError(f"--idf-sents file {args.idf_sents} has no sentences")
    lang = args.lang or (None if args.model else "en")
    scorer = BERTScorer(
        model_type=args.model, num_layers=args.num_layers, lang=lang, idf_sents=idf_sents,
        rescale_with_baseline=args.rescale, device=args.device,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    plot_pair(scorer, args.cand, args.ref, path=str(args.output))
    return 0
