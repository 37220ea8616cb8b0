"""``nlgscore bench``: nlgscore's BERTScore against bert_score's on your files and your machine.

    nlgscore bench -c examples/cands.txt -r examples/refs.txt --model minilm --rounds 3

Both scorers load the same model and layer in this process and score the same pairs, once to warm
up and then ``--rounds`` times each, alternating which goes first, so that a busy machine slows
both alike. It prints pairs/s of each side, the speed-up (the median of the per-round ratios) and
the largest difference of F1 between the two (bert_score 0.3.13 is the reference). It needs
``bert-score``: ``pip install "nlgscore[bench]"``.

A benchmark's output is kept in logs, so the libraries' progress output (transformers' and
huggingface_hub's loading bars, nlgscore's own) is off unless ``--progress`` asks for it; the
command line turns the libraries' bars off from the same flag as every other command
(``nlgscore.cli._quiet_libraries``).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from typing import Any, Callable, Dict, List, Sequence

from nlgscore.cli import COMMANDS
from nlgscore.cli.options import add_debug_options, add_format_option, check_device, fail, positive_int, read_lines

INSTALL_HINT = 'pip install "nlgscore[bench]" (it brings bert-score==0.3.13)'


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help=COMMANDS["bench"],
        description="Score the same candidate/reference pairs with nlgscore and with bert_score (same model and "
        "layer, fp32, in this process), alternating rounds, and print the speed of each side, the speed-up and "
        f"the largest F1 difference. Needs bert_score: {INSTALL_HINT}.",
    )
    parser.add_argument("-c", "--cands", required=True, metavar="FILE", help="candidate file, one segment a line")
    parser.add_argument("-r", "--refs", required=True, metavar="FILE", help="reference file, one segment a line")
    parser.add_argument(
        "-m", "--model", default="minilm", help="model both sides load: an alias, a folder or a Hub id (default minilm)"
    )
    parser.add_argument(
        "-l",
        "--num-layers",
        dest="num_layers",
        type=positive_int,
        default=None,
        help="BERTScore layer (default: nlgscore's for the model)",
    )
    parser.add_argument(
        "--rounds", type=positive_int, default=3, help="timed rounds per side; speeds are medians (default 3)"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i] (default cpu)")
    parser.add_argument(
        "--batch-size",
        dest="batch_size",
        type=positive_int,
        default=64,
        help="bert_score's batch_size (default: its own, 64)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="the libraries' progress bars on stderr, model loading included (default: off, for clean logs)",
    )
    add_format_option(parser)
    add_debug_options(parser)
    parser.set_defaults(func=run)


class Comparison:
    """What ``nlgscore bench`` measured: text is a short table, json every field, tsv one row per side.

    >>> c = Comparison({"pairs": 2, "model": "m", "num_layers": 4, "device": "cpu", "rounds": 1, "threads": 1,
    ...                 "sides": {"nlgscore": {"pairs_per_s": 40.0}, "bert_score": {"pairs_per_s": 10.0}},
    ...                 "speedup": 4.0, "max_abs_diff_f1": 0.0})
    >>> [row["side"] for row in c.rows()], "speed-up 4.00x" in str(c)
    (['nlgscore', 'bert_score'], True)
    """

    def __init__(self, report: Dict[str, Any]) -> None:
        self.report = report

    def rows(self) -> List[Dict[str, Any]]:
        return [{"side": side, **values} for side, values in self.report["sides"].items()]

    def to_dict(self) -> Dict[str, Any]:
        return self.report

    def __str__(self) -> str:
        r = self.report
        lines = [
            f"{r['pairs']} pairs, {r['model']} layer {r['num_layers']}, {r['device']}, {r['threads']} torch threads, "
            f"median of {r['rounds']} rounds"
        ]
        lines += [f"{side:<12} {values['pairs_per_s']:>10.1f} pairs/s" for side, values in r["sides"].items()]
        lines.append(f"speed-up {r['speedup']:.2f}x; max |F1 difference| {r['max_abs_diff_f1']:.2e}")
        return "\n".join(lines) + "\n"


def compare(first: Callable[[], Sequence[float]], second: Callable[[], Sequence[float]], rounds: int) -> Dict[str, Any]:
    """Time two scoring calls side by side: a warm-up each, then ``rounds`` rounds, alternating order.

    Returns each side's seconds per round and its scores from the warm-up call.

    >>> out = compare(lambda: [1.0], lambda: [1.0], rounds=2)
    >>> len(out["seconds"][0]), out["scores"]
    (2, [[1.0], [1.0]])
    """
    calls = [first, second]
    scores = [list(call()) for call in calls]
    seconds: List[List[float]] = [[], []]
    for round_ in range(rounds):
        for index in (0, 1) if round_ % 2 == 0 else (1, 0):
            start = time.perf_counter()
            calls[index]()
            seconds[index].append(time.perf_counter() - start)
    return {"seconds": seconds, "scores": scores}


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("bert_score") is None:
        fail(f"nlgscore bench compares with bert_score, which is not installed: {INSTALL_HINT}")
    import torch
    from bert_score import BERTScorer as Reference

    from nlgscore.cli.options import progress_enabled
    from nlgscore.cli.output import emit
    from nlgscore.registry import build

    check_device(args.device)
    progress = progress_enabled(args)  # --progress, and not --quiet
    cands, refs = read_lines(args.cands, "candidate"), read_lines(args.refs, "reference")
    if len(cands) != len(refs):
        fail(f"--cands has {len(cands)} lines and --refs {len(refs)}: they must pair line by line")
    if not cands:
        fail(f"--cands {args.cands} is empty: there is nothing to time")
    ours = build("bertscore", model_type=args.model, num_layers=args.num_layers, device=args.device, progress=progress)
    theirs = Reference(
        model_type=ours.encoder.resolved.path,
        num_layers=ours.num_layers,
        batch_size=args.batch_size,
        device=args.device,
    )
    timed = compare(
        lambda: [float(f) for f in ours.score(cands, refs).f1],
        lambda: [float(f) for f in theirs.score(cands, refs)[2]],
        args.rounds,
    )
    sides = {}
    for name, seconds in zip(("nlgscore", "bert_score"), timed["seconds"], strict=True):
        sides[name] = {"pairs_per_s": len(cands) / statistics.median(seconds), "seconds": seconds}
    report = {
        "pairs": len(cands),
        "model": ours.model_type,
        "num_layers": ours.num_layers,
        "device": args.device,
        "rounds": args.rounds,
        "threads": torch.get_num_threads(),
        "sides": sides,
        "speedup": statistics.median(b / a for a, b in zip(*timed["seconds"], strict=True)),
        "max_abs_diff_f1": max(abs(a - b) for a, b in zip(*timed["scores"], strict=True)),
    }
    emit(Comparison(report), args.format)
    return 0
