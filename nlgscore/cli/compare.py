"""``nlgscore compare``: is a system significantly better than a baseline?

    nlgscore compare -r refs.txt -c baseline.txt -c system2.txt --metric chrf --paired-bs

``--metric chrf`` and ``--metric bleu`` are sacreBLEU's corpus-level statistics and the test is
sacreBLEU's own ``--paired-bs`` / ``--paired-ar`` (``sacrebleu.significance.PairedTest``): same
seed and n give the same p-values and means as ``sacrebleu -i ... --paired-bs``. Any other metric
(``sentbleu``, ``bertscore:minilm`` ...) is tested on the mean of its segment scores
(``nlgscore.meta.stats.resample``), and the signature says ``system:mean-of-segments``.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence

from nlgscore.backend.extras import require
from nlgscore.cli.options import (
    add_format_option,
    add_input_options,
    add_runtime_options,
    check_aligned,
    check_device,
    fail,
    positive_int,
    read_lines,
    runtime_settings,
)
from nlgscore.cli.output import emit
from nlgscore.meta.stats.resample import DEFAULT_SEED, SystemComparison, check_resamples, check_seed

# Defaults of sacreBLEU 2.x: 1000 bootstrap resamples, 10000 randomization trials.
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10_000}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired significance tests of systems against a baseline",
        description="Score a baseline and other systems on one test set and test each against the "
        "baseline: paired bootstrap resampling (Koehn 2004) or approximate randomization, as sacreBLEU does.",
    )
    add_input_options(parser, references_required=True, multi_candidates=True)
    parser.add_argument(
        "--metric",
        default="chrf",
        help="chrf or bleu (sacreBLEU corpus statistic and test), or sentbleu / a registry spec "
        "(mean of segment scores) (default: chrf)",
    )
    test = parser.add_mutually_exclusive_group()
    test.add_argument(
        "--paired-bs", dest="test", action="store_const", const="bs", help="paired bootstrap resampling (default)"
    )
    test.add_argument(
        "--paired-ar", dest="test", action="store_const", const="ar", help="paired approximate randomization"
    )
    parser.add_argument(
        "--n-samples",
        type=positive_int,
        default=None,
        metavar="N",
        help="resamples (bs, default 1000) or trials (ar, default 10000)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default: {DEFAULT_SEED})")
    add_format_option(parser)
    add_runtime_options(parser, batch_help="most items per batch of a model-based metric")
    parser.set_defaults(func=run, test="bs")


@contextmanager
def _sacrebleu_seed(seed: int) -> Iterator[None]:
    # PairedTest reads its seed from SACREBLEU_SEED when it is built, as the sacrebleu CLI does.
    old = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SACREBLEU_SEED", None)
        else:
            os.environ["SACREBLEU_SEED"] = old


def sacrebleu_paired(
    metric_name: str, systems: Sequence[List[str]], refs: Sequence[List[str]], test: str, n_samples: int, seed: int
) -> tuple[List[SystemComparison], str]:
    """sacreBLEU's paired test of ``systems[1:]`` against ``systems[0]`` on a corpus metric.

    ``refs`` holds one list per reference stream. Returns one ``SystemComparison`` per system (the
    baseline first, ``p_value=None``; no CI for ``ar``, as the sacrebleu CLI) and the signature.
    """
    significance = require("sacrebleu.significance", "meta", "--metric chrf/bleu")
    from nlgscore import registry

    metric = registry.cached(metric_name).corpus_metric()
    named = [(f"system{i}", list(lines)) for i, lines in enumerate(systems)]
    with _sacrebleu_seed(seed):
        paired = significance.PairedTest(
            named, {metric_name: metric}, references=[list(r) for r in refs], test_type=test, n_samples=n_samples
        )
    signatures, scores = paired()
    key = next(k for k in scores if k != "System")
    results = []
    for r in scores[key]:
        mean = r.mean if r.mean is not None else float("nan")
        half = r.ci if r.ci is not None else float("nan")
        results.append(SystemComparison(float(r.score), float(mean), mean - half, mean + half, r.p_value))
    return results, f"{key}|{signatures[key].format()}|system:corpus"


def _segment_comparisons(
    args, systems: Sequence[List[str]], refs: List[str], srcs: Optional[List[str]], n_samples: int
) -> tuple[List[SystemComparison], str]:
    from nlgscore.meta.engine import Scorers
    from nlgscore.meta.stats.resample import compare_systems_bootstrap, compare_systems_randomization

    scorers, scores, signature = Scorers(runtime_settings(args)), [], ""
    for lines in systems:
        system_scores, signature = scorers.score(args.metric, lines, refs, srcs)
        scores.append(system_scores)
    test = compare_systems_bootstrap if args.test == "bs" else compare_systems_randomization
    results = test(scores[0], scores[1:], n_samples, seed=args.seed)
    return results, f"{signature}|test:{args.test}|n:{n_samples}|seed:{args.seed}|system:mean-of-segments"


def _read(args) -> tuple[List[List[str]], List[List[str]], Optional[List[str]]]:
    if len(args.cands) < 2:
        fail("give a baseline and at least one system: -c BASELINE -c SYSTEM [...]")
    refs = [read_lines(path, "reference") for path in args.refs]
    srcs = read_lines(args.srcs, "source") if args.srcs else None
    outputs = [read_lines(path, "system") for path in args.cands]
    for path, lines in [*zip(args.refs, refs), *zip(args.cands, outputs)]:
        if not lines:
            fail(f"{path} is empty: a paired test needs at least one segment")
    check_aligned(
        (args.refs[0], refs[0]), [*zip(args.refs[1:], refs[1:]), (args.srcs, srcs), *zip(args.cands, outputs)]
    )
    return outputs, refs, srcs


def run(args: argparse.Namespace) -> int:
    check_device(args.device)
    seed = check_seed(args.seed)  # numpy and sacreBLEU take seeds >= 0: refused before any scoring
    n_samples = check_resamples(args.n_samples or DEFAULT_SAMPLES[args.test], "n_samples", "--n-samples", minimum=1)
    outputs, refs, srcs = _read(args)
    from nlgscore.meta.engine import SYSTEM_CORPUS

    if args.metric.lower() in SYSTEM_CORPUS:
        results, signature = sacrebleu_paired(args.metric.lower(), outputs, refs, args.test, n_samples, seed)
    elif len(refs) > 1:
        fail(f"--metric {args.metric} takes one reference file (-r); chrf and bleu take several")
    else:
        if len(outputs[0]) < 2:
            fail("a paired test of segment scores needs at least 2 segments")
        results, signature = _segment_comparisons(args, outputs, refs[0], srcs, n_samples)
    emit(ComparisonReport(args.metric, args.test, [str(p) for p in args.cands], results, signature), args.format)
    return 0


class ComparisonReport:
    """The paired tests of ``systems`` (the baseline first) as printed by :func:`nlgscore.cli.output.emit`."""

    def __init__(
        self, metric: str, test: str, names: List[str], results: List[SystemComparison], signature: str
    ) -> None:
        self.metric, self.test, self.names, self.results, self.signature = metric, test, names, results, signature

    def rows(self) -> List[Dict[str, object]]:
        return [
            {
                "system": name,
                "baseline": i == 0,
                "score": r.score,
                "mean": r.mean,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "p_value": r.p_value,
            }
            for i, (name, r) in enumerate(zip(self.names, self.results))
        ]

    def to_dict(self) -> Dict[str, object]:
        return {"metric": self.metric, "test": self.test, "signature": self.signature, "systems": self.rows()}

    def __str__(self) -> str:
        from nlgscore.meta.report import text_table

        lines = []
        for name, r in zip(self.names, self.results):
            p = "(baseline)" if r.p_value is None else f"{r.p_value:.4f}" + (" *" if r.p_value < 0.05 else "")
            interval = "" if r.ci_low != r.ci_low else f"{r.mean:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]"
            lines.append((name, f"{r.score:.4f}", interval, p))
        table = text_table(("System", self.metric, "mean [95% CI]", "p-value"), lines)
        return "\n".join([table, "* p < 0.05: significantly different from the baseline", self.signature])
