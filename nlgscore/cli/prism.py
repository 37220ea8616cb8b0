"""``nlgscore prism``: Prism-ref (with -r) or Prism-src (with -s) of a candidate file.

    nlgscore prism -c cands.txt -r refs.txt --lang en --checkpoint tests/golden/tiny-prism --seg

Prints ``<signature> Prism-ref: -x.xxxxxx`` (the mean over lines, natural-log probabilities);
``--seg`` first prints each line's score, ``--json`` one JSON object with every column.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nlgscore.cli.options import add_runtime_options, check_aligned, read_lines


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "prism", help="Prism (Thompson & Post 2020): paraphrase log-probabilities of candidates",
        description="Score each candidate line against the same line of the reference file (Prism-ref, "
        "both directions averaged; several -r files = mean over references) or of the source file (Prism-src).",
    )
    parser.add_argument("-c", "--cands", type=Path, required=True, help="candidate file, one segment a line")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("-r", "--refs", type=Path, action="append", help="reference file (Prism-ref); repeat for several")
    given.add_argument("-s", "--srcs", type=Path, help="source file (Prism-src, quality estimation)")
    parser.add_argument("--lang", default="en", help="language of the candidates (default: en)")
    parser.add_argument("--checkpoint", default=None, help="Hub id or folder (default: the m39v1 model, dariast/prism)")
    parser.add_argument("--revision", default=None, help="Hub revision of --checkpoint")
    parser.add_argument("--temperature", type=float, default=1.0, help="softmax temperature (default: 1.0)")
    add_runtime_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.seq2seq.prism import PrismScorer

    cands = read_lines(args.cands, "candidate")
    given = [(path, read_lines(path, "reference")) for path in args.refs or []]
    if args.srcs is not None:
        given.append((args.srcs, read_lines(args.srcs, "source")))
    check_aligned((args.cands, cands), given)
    scorer = PrismScorer(
        checkpoint=args.checkpoint, lang=args.lang, temperature=args.temperature, device=args.device,
        batch_size=args.batch_size, max_tokens=args.max_tokens, dtype=args.dtype, revision=args.revision,
        progress=args.progress,
    )
    if args.srcs is not None:
        result, label = scorer.score(cands, srcs=given[0][1]), "Prism-src"
    else:
        refs = [list(group) for group in zip(*(lines for _, lines in given))] if len(given) > 1 else given[0][1]
        result, label = scorer.score(cands, refs=refs), "Prism-ref"
    if args.json:
        json.dump(result.to_dict(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.seg:
        for value in result.segment:
            print(f"{value:.6f}")
    print(f"{result.signature} {label}: {result.system:.6f}")
    return 0
