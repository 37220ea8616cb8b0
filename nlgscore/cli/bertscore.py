"""``nlgscore bertscore``: BERTScore of a candidate file against one or more reference files.

    nlgscore bertscore --model minilm -c examples/cands.txt -r examples/refs.txt --seg

Output as bert_score's CLI: ``<signature> P: 0.xxxxxx R: 0.xxxxxx F1: 0.xxxxxx``; ``--seg`` first
prints ``P<TAB>R<TAB>F`` per line, ``--json`` one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nlgscore.cli.options import add_runtime_options, check_aligned, read_lines


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bertscore", help="BERTScore (bert_score 0.3.13 semantics) of candidates against references",
        description="Score each candidate line against the same line of every reference file "
        "(several -r files = multiple references, the best one counts).",
    )
    parser.add_argument("-c", "--cands", type=Path, required=True, help="candidate file, one segment a line")
    parser.add_argument("-r", "--refs", type=Path, action="append", required=True,
                        help="reference file; repeat for multiple references")
    parser.add_argument("-m", "--model", default=None, help="model id, folder or alias (e.g. minilm); default: by --lang")
    parser.add_argument("-l", "--num-layers", type=int, default=None, help="layer to use (default: the model's tuned layer)")
    parser.add_argument("--lang", default=None, help="language code: picks the default model and baseline")
    parser.add_argument("--idf", action="store_true", help="idf weighting from the references")
    parser.add_argument("--rescale", action="store_true", help="rescale with the baseline (needs --lang or --baseline-path)")
    parser.add_argument("--baseline-path", default=None, help="baseline file (LAYER,P,R,F rows)")
    add_runtime_options(parser, batch_help="most sentences per batch (default: token budget only)",
                        tokens_help="padded tokens per batch (default: 2048 on CPU)", seg_short=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nlgscore.bertscore import BERTScorer

    cands = read_lines(args.cands, "candidate")
    ref_sets = [read_lines(path, "reference") for path in args.refs]
    check_aligned((args.cands, cands), list(zip(args.refs, ref_sets)))
    refs = [list(group) for group in zip(*ref_sets)] if len(ref_sets) > 1 else ref_sets[0]
    scorer = BERTScorer(
        model_type=args.model, num_layers=args.num_layers, lang=args.lang, idf=args.idf,
        rescale_with_baseline=args.rescale, baseline_path=args.baseline_path, device=args.device,
        batch_size=args.batch_size, max_tokens=args.max_tokens, dtype=args.dtype, progress=args.progress,
    )
    result = scorer.score(cands, refs)
    system = result.system
    if args.json:
        json.dump(result.to_dict(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.seg:
        for p, r, f in zip(result.precision, result.recall, result.f1):
            print(f"{p:.6f}\t{r:.6f}\t{f:.6f}")
    print(f"{result.signature} P: {system['precision']:.6f} R: {system['recall']:.6f} F1: {system['f1']:.6f}")
    return 0
