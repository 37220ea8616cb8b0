"""``nlgscore meta``: correlation of metrics with human judgments on standard data sets.

    nlgscore meta wmt19 --lp kk-en --metric chrf --metric sentbleu --json out.json
    nlgscore meta wmt21 --data ../shared/data/wmt21-de-en --metric chrf --metric sentbleu
    nlgscore meta summeval --metric chrf --aspect coherence
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np

from nlgscore.meta import loaders
from nlgscore.meta.report import Row, format_table, plot_rows, write_csv, write_json
from nlgscore.meta.resample import DEFAULT_SEED, bootstrap_ci, paired_bootstrap
from nlgscore.meta.scoring import segment_scores
from nlgscore.meta.summ import document_correlations
from nlgscore.meta.wmt import darr_concordance, pearson, williams_test_scores
from nlgscore.meta.wmt21 import identical_output_agreement, wmt21_inputs, wmt21_items, wmt21_judgments

SIGNIFICANCE_LEVEL = 0.05


def _common_options(parser: argparse.ArgumentParser, data_help: str) -> None:
    parser.add_argument("--data", type=Path, default=None, help=data_help)
    parser.add_argument(
        "--metric", action="append", required=True,
        help="metric spec: chrf, sentbleu, or a registry spec such as bertscore:minilm (repeatable)",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="bootstrap resamples for 95%% CIs and paired tests; 0 = none (default: 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"resampling seed (default: {DEFAULT_SEED})")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the results as JSON")
    parser.add_argument("--csv", type=Path, default=None, metavar="PATH", help="write the results as CSV")
    parser.add_argument("--plot", type=Path, default=None, metavar="PATH", help="bar chart with CIs (needs matplotlib)")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="use only the first N items (pairs, segments or documents) for a quick run")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "meta", help="meta-evaluate metrics against human judgments",
        description="Correlation of metrics with human judgments, with bootstrap CIs and significance tests.",
    )
    tasks = parser.add_subparsers(dest="meta_task", metavar="DATASET", required=True)
    wmt19 = tasks.add_parser("wmt19", help="WMT19 daRR pairs (BARTScore/COMET version): Kendall's tau-like")
    _common_options(wmt19, "folder with wmt-<lp>.jsonl (default: $NLGSCORE_DATA or ../shared/data)")
    wmt19.add_argument("--lp", action="append", default=None,
                       help="language pair, e.g. kk-en (repeatable; default: every wmt-*.jsonl in --data)")
    wmt21 = tasks.add_parser("wmt21", help="WMT21 DA: daRR tau, segment Pearson, system Pearson + Williams")
    _common_options(wmt21, "WMT21 folder (default: <data>/wmt21-de-en)")
    wmt21.add_argument("--lp", default="de-en", help="language pair of the folder (default: de-en)")
    wmt21.add_argument("--reference", default="A", help="reference file ref.<X>.<tl> (default: A)")
    wmt21.add_argument("--include-human", action="store_true",
                       help="also evaluate the HUMAN translation as a system (default: MT systems only)")
    summeval = tasks.add_parser("summeval", help="SummEval: summary-level Spearman/Kendall per aspect")
    _common_options(summeval, "folder with sum-summeval.jsonl (default: $NLGSCORE_DATA or ../shared/data)")
    summeval.add_argument("--aspect", action="append", default=None,
                          help="coherence, consistency, fluency or relevance (repeatable; default: all)")
    summeval.add_argument("--refs", choices=("max", "mean", "first"), default="max",
                          help="combine scores against the several references (default: max)")
    for sub in (wmt19, wmt21, summeval):
        sub.set_defaults(func=run)


def _with_ci(
    args, statistic: Callable[..., float], data: Tuple[np.ndarray, ...], **row: str
) -> Row:
    value = float(statistic(*data))
    low = high = float("nan")
    if args.bootstrap > 0:
        interval = bootstrap_ci(statistic, data, n_samples=args.bootstrap, seed=args.seed)
        low, high = interval.low, interval.high
        row["signature"] += f"|bootstrap:{args.bootstrap}|seed:{args.seed}"
    return Row(value=value, ci_low=low, ci_high=high, **row)


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _beaten(args, per_metric: Dict[str, np.ndarray]) -> List[str]:
    """Paired bootstrap of a mean-type statistic between every two metrics."""
    lines = []
    if args.bootstrap <= 0:
        return lines
    for a, b in itertools.permutations(per_metric, 2):
        test = paired_bootstrap(_mean, (per_metric[a],), (per_metric[b],), args.bootstrap, args.seed)
        if test.p_value < SIGNIFICANCE_LEVEL:
            lines.append(f"  {a} significantly beats {b} (paired bootstrap, p={test.p_value:.3f})")
    return lines or ["  no significant differences (paired bootstrap, p<0.05)"]


def _wmt19(args) -> Tuple[List[Row], List[str]]:
    folder = args.data or loaders.default_data_dir()
    lps = args.lp or sorted(p.name[len("wmt-"):-len(".jsonl")] for p in Path(folder).glob("wmt-*.jsonl"))
    if not lps:
        raise FileNotFoundError(f"no wmt-<lp>.jsonl files in {folder}")
    rows, notes = [], []
    for lp in lps:
        darr = loaders.load_darr(loaders.darr_path(lp, folder)).head(args.limit)
        n = len(darr)
        concordance = {}
        for spec in args.metric:
            scores, signature = segment_scores(spec, darr.better + darr.worse, darr.ref * 2, darr.src * 2)
            concordance[spec] = darr_concordance(scores[:n], scores[n:])
            # tau = mean concordance, so resampling pairs resamples the +-1 vector.
            rows.append(_with_ci(args, _mean, (concordance[spec],), dataset=lp, metric=spec,
                                 level="segment", measure="tau", signature=signature))
        notes.append(f"{lp} ({n} daRR pairs):")
        notes += _beaten(args, concordance) if len(concordance) > 1 else []
    return rows, notes


def _wmt21(args) -> Tuple[List[Row], List[str]]:
    folder = args.data or loaders.default_data_dir() / f"wmt21-{args.lp}"
    data = loaders.load_wmt21(folder, lp=args.lp, reference=args.reference)
    judgments = wmt21_judgments(data, include_human=args.include_human, limit=args.limit)
    systems, n = judgments.systems, judgments.raw.shape[1]
    if not judgments.pairs:
        raise ValueError(f"{folder}: no daRR pairs in the first {n} segments")
    hyps, refs = wmt21_inputs(data, judgments)
    rows, sys_scores, concordance = [], {}, {}
    dataset = f"wmt21-{args.lp}"
    judged = judgments.judged
    for spec in args.metric:
        flat, signature = segment_scores(spec, hyps, refs, data.src[:n] * len(systems))
        items = wmt21_items(judgments, np.array(flat).reshape(len(systems), n))
        concordance[spec] = items.concordance
        common = dict(dataset=dataset, metric=spec, signature=signature)
        rows.append(_with_ci(args, _mean, (items.concordance,), level="segment", measure="tau", **common))
        rows.append(_with_ci(args, pearson, (judgments.raw[judged], items.seg_metric), level="segment", measure="pearson-raw", **common))
        rows.append(_with_ci(args, pearson, (items.seg_human, items.seg_metric), level="segment", measure="pearson-z", **common))
        sys_scores[spec] = items.sys_metric
        rows.append(Row(dataset, spec, "system", "pearson-z", pearson(items.sys_human, items.sys_metric), signature=signature))
    notes = [f"{dataset}: {n} segments, {len(systems)} systems, {len(judgments.pairs)} daRR pairs (>25 raw DA)"]
    agreement = identical_output_agreement(data, judgments)
    if agreement["n_same"] > 100 and not agreement["r_same"] > agreement["r_different"] + 0.1:
        notes.append(
            f"  warning: identical translations get DA no more alike (r={agreement['r_same']:.3f}) than different ones "
            f"(r={agreement['r_different']:.3f}): the segment ids of the DA file do not seem to follow the lines of the "
            "text files, so segment-level numbers are not meaningful (system level is unaffected)"
        )
    if len(args.metric) > 1:
        notes += _beaten(args, concordance)
        for a, b in itertools.permutations(args.metric, 2):
            t, p = williams_test_scores(judgments.sys_z, sys_scores[a], sys_scores[b])
            if p < SIGNIFICANCE_LEVEL:
                notes.append(f"  {a} significantly beats {b} at system level (Williams t={t:.3f}, p={p:.3f})")
    return rows, notes


def _combine(scores: np.ndarray, how: str) -> np.ndarray:
    return {"max": np.max, "mean": np.mean}[how](scores, axis=-1) if how != "first" else scores[..., 0]


def _summeval(args) -> Tuple[List[Row], List[str]]:
    data = loaders.load_summeval(Path(args.data or loaders.default_data_dir()) / "sum-summeval.jsonl")
    docs = range(min(len(data.ids), args.limit or len(data.ids)))
    aspects = args.aspect or sorted(data.human)
    unknown = [a for a in aspects if a not in data.human]
    if unknown:
        raise ValueError(f"unknown aspect(s) {unknown}; SummEval has {sorted(data.human)}")
    n_refs = 1 if args.refs == "first" else min(len(data.refs[d]) for d in docs)
    hyps, refs, srcs = [], [], []
    for d in docs:
        for text in data.texts[d]:
            for ref in data.refs[d][:n_refs]:
                hyps.append(text), refs.append(ref), srcs.append(data.srcs[d])
    rows = []
    for spec in args.metric:
        flat, signature = segment_scores(spec, hyps, refs, srcs)
        metric = _combine(np.array(flat).reshape(len(docs), len(data.systems), n_refs), args.refs)
        for aspect, method in itertools.product(aspects, ("spearman", "kendall")):
            per_doc = document_correlations(data.human[aspect][: len(docs)], metric, method)
            rows.append(_with_ci(args, _mean, (per_doc,), dataset=f"summeval-{aspect}", metric=spec,
                                 level="summary", measure=method, signature=f"{signature}|refs:{args.refs}"))
    return rows, [f"summeval: {len(docs)} documents x {len(data.systems)} systems"]


TASKS = {"wmt19": _wmt19, "wmt21": _wmt21, "summeval": _summeval}


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 2:
        raise ValueError("--limit must be at least 2")
    if args.bootstrap < 0:
        raise ValueError("--bootstrap must be >= 0")
    rows, notes = TASKS[args.meta_task](args)
    print(format_table(rows))
    for line in notes:
        print(line)
    if args.json:
        write_json(rows, args.json)
    if args.csv:
        write_csv(rows, args.csv)
    if args.plot:
        plot_rows(rows, args.plot, title=f"nlgscore meta {args.meta_task}")
    return 0
