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
from typing import List


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
    parser.add_argument("-b", "--batch-size", type=int, default=64, help="most sentences per batch (default: 64)")
    parser.add_argument("--max-tokens", type=int, default=None, help="padded tokens per batch (default: 2048 on CPU)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    parser.add_argument("-s", "--seg", action="store_true", help="also print P, R, F of every line")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar on stderr (default: on)")
    parser.set_defaults(func=run)


def read_lines(path: Path, what: str) -> List[str]:
    """Lines of a text file; a missing file is an error (never read as literal text)."""
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    text = path.read_text(encoding="utf-8")
    # Split on "\n" only: other Unicode line separators may sit inside a segment.
    return (text[:-1] if text.endswith("\n") else text).split("\n") if text else []


def run(args: argparse.Namespace) -> int:
    from nlgscore.bertscore import BERTScorer

    cands = read_lines(args.cands, "candidate")
    ref_sets = [read_lines(path, "reference") for path in args.refs]
    for path, refs in zip(args.refs, ref_sets):
        if len(refs) != len(cands):
            raise ValueError(f"{path} has {len(refs)} lines but {args.cands} has {len(cands)}")
    refs = [list(group) for group in zip(*ref_sets)] if len(ref_sets) > 1 else ref_sets[0]
    scorer = BERTScorer(
        model_type=args.model, num_layers=args.num_layers, lang=args.lang, idf=args.idf,
        rescale_with_baseline=args.rescale, baseline_path=args.baseline_path, device=args.device,
        batch_size=args.batch_size, max_tokens=args.max_tokens, progress=args.progress,
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
