"""``nlgscore show``: the token-similarity heat map of one candidate/reference pair.

    nlgscore show --cand "it is freezing today" --ref "the weather is cold today" --model minilm -o pair.png
    nlgscore show -c cands.txt -r refs.txt --line 3 --model minilm -o pair.png

As in every command, ``-c``/``-r`` name files (``--line`` picks the pair, 1-based); ``--cand`` and
``--ref`` give the sentences themselves. ``--idf`` needs ``--idf-sents FILE``: idf weights come
from document frequencies over a corpus, and one or two sentences give meaningless weights.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import add_debug_options, check_device, check_text, fail, load_scorer, read_lines

IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "show",
        help=COMMANDS["show"],
        description="Draw the BERTScore token-similarity matrix of one candidate/reference pair, with "
        "each token's greedy match marked in both directions (the BERTScore paper's Figure 1).",
    )
    cand = parser.add_mutually_exclusive_group(required=True)
    cand.add_argument("-c", "--cands", metavar="FILE", help="candidate file ('-' = stdin); --line picks the line")
    cand.add_argument("--cand", metavar="TEXT", help="the candidate sentence itself")
    ref = parser.add_mutually_exclusive_group(required=True)
    ref.add_argument("-r", "--refs", metavar="FILE", help="reference file; --line picks the line")
    ref.add_argument("--ref", metavar="TEXT", help="the reference sentence itself")
    parser.add_argument("-n", "--line", type=int, default=1, help="line of -c/-r to draw (1-based, default: 1)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="image file to write (.png, .pdf, .svg)")
    parser.add_argument(
        "-m",
        "--model",
        "--checkpoint",
        dest="model",
        default=None,
        help="model id, folder or alias (e.g. minilm); default: by --lang",
    )
    parser.add_argument(
        "-l", "--num-layers", type=int, default=None, help="layer to use (default: the model's tuned layer)"
    )
    parser.add_argument(
        "--lang", default=None, help="language code: picks the default model and baseline (default: en)"
    )
    parser.add_argument(
        "--idf", action="store_true", help="weight tokens by idf (needs --idf-sents) and show the weights"
    )
    parser.add_argument(
        "--idf-sents", default=None, metavar="FILE", help="file of reference sentences, one a line, for the idf weights"
    )
    parser.add_argument(
        "--rescale", action="store_true", help="rescale similarities with the F1 baseline (needs --lang)"
    )
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    add_debug_options(parser)
    parser.set_defaults(func=run)


def _sentence(text, path, line: int, flag: str, what: str) -> str:
    if text is not None:
        return check_text(text, flag)
    if path != "-" and (not Path(path).exists() or Path(path).is_dir()):  # a FIFO or <(...) is read too
        fail(f"{what} file not found: {path} (to give the sentence itself, use {flag} TEXT)")
    lines = read_lines(path, what)
    if not 1 <= line <= len(lines):
        fail(f"--line {line}: {what} file {path} has {len(lines)} lines")
    return lines[line - 1]


def _check_output(path: Path) -> None:
    if path.is_dir():
        fail(f"-o {path} is a folder; give an image file name such as {path / 'pair.png'}")
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        fail(f"-o {path}: the file name must end in one of {', '.join(IMAGE_SUFFIXES)}")


def run(args: argparse.Namespace) -> int:
    _check_output(args.output)
    cand = _sentence(args.cand, args.cands, args.line, "--cand", "candidate")
    ref = _sentence(args.ref, args.refs, args.line, "--ref", "reference")
    if args.idf and args.idf_sents is None:
        fail("--idf needs --idf-sents FILE: idf weights are document frequencies over a corpus of references")
    if args.idf_sents is not None and not args.idf:
        fail("--idf-sents is only used with --idf")
    idf_sents = None
    if args.idf_sents is not None:
        idf_sents = [line.strip() for line in read_lines(args.idf_sents, "--idf-sents") if line.strip()]
        if not idf_sents:
            fail(f"--idf-sents file {args.idf_sents} has no sentences")
    check_device(args.device)
    from nlgscore.bertscore.plot import plot_pair
    from nlgscore.registry import build

    lang = args.lang or (None if args.model else "en")
    scorer = load_scorer(
        lambda: build(
            "bertscore",
            model_type=args.model,
            num_layers=args.num_layers,
            lang=lang,
            idf=args.idf,
            idf_sents=idf_sents,
            rescale_with_baseline=args.rescale,
            device=args.device,
        ),
        {"--model": args.model},
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    plot_pair(scorer, cand, ref, path=str(args.output))
    print(f"wrote {args.output}")
    return 0
