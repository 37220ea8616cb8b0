"""``nlgscore bartscore``: BARTScore of a candidate file against references and/or sources.

    nlgscore bartscore -c cands.txt -r refs.txt --checkpoint tests/golden/tiny-bart --seg

Prints ``<signature> BARTScore: -x.xxxxxx`` (the mean over lines); ``--seg`` first prints each
line's score (with precision and recall for ``--direction f|harmonic``), ``--json`` one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nlgscore.cli.options import add_runtime_options, check_aligned, read_lines


def register(subparsers) -> None:
    from nlgscore.seq2seq.bartscore import AGGREGATIONS, DIRECTIONS, PROMPT_SIDES

    parser = subparsers.add_parser(
        "bartscore", help="BARTScore (Yuan et al. 2021, the authors' numbers) of candidates",
        description="Score each candidate line against the same line of every reference file (several -r "
        "files = multiple references, aggregated with --agg) or, with --direction src, of the source file.",
    )
    parser.add_argument("-c", "--cands", type=Path, required=True, help="candidate file, one segment a line")
    parser.add_argument("-r", "--refs", type=Path, action="append", default=[], help="reference file; repeat for multiple references")
    parser.add_argument("-s", "--srcs", type=Path, default=None, help="source file (for --direction src)")
    parser.add_argument("--variant", default="bart-large-cnn", help="bart-large, bart-large-cnn (default), bart-large-cnn-para")
    parser.add_argument("--checkpoint", default=None, help="Hub id or folder replacing the variant's weights")
    parser.add_argument("--para-weights", default=None, help="ParaBank2 bart.pth (file or Hub repo) for bart-large-cnn-para")
    parser.add_argument("--direction", choices=DIRECTIONS, default=None, help="default: src with -s and no -r, else f")
    parser.add_argument("--prompt", default=None, help="a prompt, or ref_hyp / src_hyp for the paper's prompt sets")
    parser.add_argument("--prompt-side", choices=PROMPT_SIDES, default="encoder", help="encoder suffix or decoder prefix")
    parser.add_argument("--agg", choices=AGGREGATIONS, default="mean", help="over multiple references (default: mean)")
    add_runtime_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.seq2seq.bartscore import BARTScorer

    cands = read_lines(args.cands, "candidate")
    ref_sets = [read_lines(path, "reference") for path in args.refs]
    srcs = read_lines(args.srcs, "source") if args.srcs is not None else None
    check_aligned((args.cands, cands), [*zip(args.refs, ref_sets), (args.srcs, srcs)])
    direction = args.direction or ("src" if srcs is not None and not ref_sets else "f")
    if direction == "src" and srcs is None:
        raise ValueError("--direction src needs a source file (-s)")
    if direction != "src" and not ref_sets:
        raise ValueError(f"--direction {direction} needs at least one reference file (-r)")
    refs = [list(group) for group in zip(*ref_sets)] if len(ref_sets) > 1 else (ref_sets[0] if ref_sets else None)
    scorer = BARTScorer(
        checkpoint=args.checkpoint, variant=args.variant, device=args.device, batch_size=args.batch_size,
        max_tokens=args.max_tokens, dtype=args.dtype, para_weights=args.para_weights, direction=direction,
        progress=args.progress,
    )
    result = scorer.compute(cands, refs, sources=srcs, prompt=args.prompt, prompt_side=args.prompt_side, agg=args.agg)
    if args.json:
        json.dump(result.to_dict(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.seg:
        columns = result.columns()
        names = ["scores"] + [n for n in ("precision", "recall") if n in columns]
        for row in zip(*(columns[n] for n in names)):
            print("\t".join(f"{v:.6f}" for v in row))
    print(f"{result.signature} BARTScore: {result.system:.6f}")
    return 0
