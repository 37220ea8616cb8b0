"""``nlgscore compare``: is a system significantly better than a baseline? (like sacreBLEU's
``--paired-bs`` / ``--paired-ar``, on the mean of segment scores of any metric).

    nlgscore compare -r refs.txt -c baseline.txt -c system2.txt --metric chrf --paired-bs
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nlgscore.cli.options import check_aligned, read_lines
from nlgscore.meta.resample import DEFAULT_SEED, compare_systems_bootstrap, compare_systems_randomization
from nlgscore.meta.scoring import segment_scores

# Defaults of sacreBLEU 2.x: 1000 bootstrap resamples, 10000 randomization trials.
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10_000}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="paired significance tests of systems against a baseline",
        description="Score a baseline and other systems on one test set and test each against the "
        "baseline: paired bootstrap resampling (Koehn 2004) or approximate randomization.",
    )
    parser.add_argument("-r", "--refs", type=Path, required=True, help="reference file, one segment a line")
    parser.add_argument("-c", "--cand", type=Path, action="append", required=True, metavar="SYSTEM",
                        help="system output file; the first is the baseline (give at least two)")
    parser.add_argument("-s", "--srcs", type=Path, default=None, help="source file (for source-based metrics)")
    parser.add_argument("--metric", default="chrf", help="chrf, sentbleu or a registry spec (default: chrf)")
    test = parser.add_mutually_exclusive_group()
    test.add_argument("--paired-bs", dest="test", action="store_const", const="bs",
                      help="paired bootstrap resampling (default)")
    test.add_argument("--paired-ar", dest="test", action="store_const", const="ar",
                      help="paired approximate randomization")
    parser.add_argument("--n-samples", type=int, default=None, metavar="N",
                        help="resamples (bs, default 1000) or trials (ar, default 10000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default: {DEFAULT_SEED})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run, test="bs")


def run(args: argparse.Namespace) -> int:
    if len(args.cand) < 2:
        raise ValueError("give a baseline and at least one system: -c BASELINE -c SYSTEM [...]")
    refs = read_lines(args.refs, "reference")
    srcs = read_lines(args.srcs, "source") if args.srcs else None
    outputs = [read_lines(path, "system") for path in args.cand]
    check_aligned((args.refs, refs), [(args.srcs, srcs), *zip(args.cand, outputs)])
    scores = []
    signature = ""
    for lines in outputs:
        system_scores, signature = segment_scores(args.metric, lines, refs, srcs)
        scores.append(system_scores)
    n_samples = args.n_samples or DEFAULT_SAMPLES[args.test]
    if n_samples < 1:
        raise ValueError("--n-samples must be positive")
    if args.test == "bs":
        results = compare_systems_bootstrap(scores[0], scores[1:], n_samples=n_samples, seed=args.seed)
    else:
        results = compare_systems_randomization(scores[0], scores[1:], n_trials=n_samples, seed=args.seed)
    signature = f"{signature}|test:{args.test}|n:{n_samples}|seed:{args.seed}|system:mean-of-segments"
    names = [str(path) for path in args.cand]
    if args.json:
        records = [
            {"system": name, "baseline": i == 0, "score": r.score, "mean": r.mean,
             "ci_low": r.ci_low, "ci_high": r.ci_high, "p_value": r.p_value}
            for i, (name, r) in enumerate(zip(names, results))
        ]
        print(json.dumps({"metric": args.metric, "signature": signature, "systems": records}, indent=2))
        return 0
    width = max(len(name) for name in names + ["System"])
    print(f"{'System':<{width}}  {args.metric} (mean [95% CI])          p-value")
    for i, (name, r) in enumerate(zip(names, results)):
        p = "(baseline)" if i == 0 else f"{r.p_value:.4f}" + (" *" if r.p_value < 0.05 else "")
        print(f"{name:<{width}}  {r.score:8.4f} ({r.mean:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}])  {p}")
    print("* p < 0.05: significantly different from the baseline")
    print(signature)
    return 0
