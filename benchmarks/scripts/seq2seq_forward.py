"""BARTScore and Prism through the padded likelihood engine and through the token forward
(``NLGSCORE_TOKEN_FORWARD=1``), side by side in one process: pairs/s of each, in alternating
rounds (median), and the largest difference of their scores.

    python -m benchmarks seq2seq_forward --data ../shared/data/wmt-kk-en.jsonl --pairs 128 --rounds 3

Models: the tiny golden checkpoints (tests/golden) and a bart-base-shaped BART with random weights
and a BPE tokenizer trained on the file's texts (``--no-base`` skips it). Pairs: the file's better
translations against their references (``log p(candidate | reference)``, BARTScore's F direction
and Prism-ref). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.harness.data import load_pairs  # noqa: E402
from nlgscore.backend.packed_attention import ENV_SWITCH  # noqa: E402


def scorers(name: str, folder: str) -> Tuple[Any, Any]:
    """The scorer of ``name`` on ``folder`` built with the switch off, then with it on (it is read at load)."""
    from nlgscore.seq2seq.bartscore import BARTScorer
    from nlgscore.seq2seq.prism import PrismScorer

    def build() -> Any:
        if name == "prism":
            return PrismScorer(folder, lang="en", device="cpu", dtype="float32")
        return BARTScorer(checkpoint=folder, device="cpu", dtype="float32", long_inputs="truncate")

    os.environ.pop(ENV_SWITCH, None)
    padded = build()
    os.environ[ENV_SWITCH] = "1"
    try:
        tokens = build()
    finally:
        os.environ.pop(ENV_SWITCH, None)
    return padded, tokens


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def compare(label: str, padded: Any, tokens: Any, cands: List[str], refs: List[str], rounds: int) -> Dict[str, Any]:
    assert "forward:tokens" in str(tokens.signature) and "forward:tokens" not in str(padded.signature)
    one, other = padded.compute(cands, refs).scores, tokens.compute(cands, refs).scores  # warm-up, and the numbers
    seconds: Dict[str, List[float]] = {"padded": [], "tokens": []}
    for _ in range(rounds):
        seconds["padded"].append(timed(lambda: padded.compute(cands, refs)))
        seconds["tokens"].append(timed(lambda: tokens.compute(cands, refs)))
    medians = {side: statistics.median(values) for side, values in seconds.items()}
    return {
        "model": label,
        "pairs": len(cands),
        "padded_pairs_per_s": len(cands) / medians["padded"],
        "tokens_pairs_per_s": len(cands) / medians["tokens"],
        "speedup": medians["padded"] / medians["tokens"],
        "max_abs_diff": max(abs(a - b) for a, b in zip(one, other)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "wmt-kk-en.jsonl"))
    parser.add_argument("--pairs", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    import torch

    torch.manual_seed(0)
    rows = load_pairs(args.data, args.pairs)
    cands, refs = rows.better, rows.refs
    out = []
    golden = REPO / "tests" / "golden"
    for name, folder, label in (
        ("bartscore", str(golden / "tiny-bart"), "BARTScore, tiny-bart"),
        ("prism", str(golden / "tiny-prism"), "Prism-ref, tiny-prism"),
    ):
        out.append(compare(label, *scorers(name, folder), cands, refs, args.rounds))
    if args.base:
        from benchmarks.harness.synthetic import build_random_model

        with tempfile.TemporaryDirectory(prefix="seq2seq-forward-") as folder:
            corpus = load_pairs(args.data, 4000)  # enough text for the BPE to reach the shape's vocabulary
            texts = list(dict.fromkeys(corpus.refs + corpus.better + corpus.worse))
            path = build_random_model("bart-base", os.path.join(folder, "bart-base"), texts)
            out.append(
                compare(
                    "BARTScore, bart-base-shaped (random weights)",
                    *scorers("bartscore", path),
                    cands,
                    refs,
                    args.rounds,
                )
            )
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; {args.pairs} pairs, median of {args.rounds} rounds\n"
    )
    print("| model | padded engine (pairs/s) | token forward (pairs/s) | token ÷ padded | max abs diff |")
    print("|---|---:|---:|---:|---:|")
    for row in out:
        print(
            f"| {row['model']} | {row['padded_pairs_per_s']:,.0f} | {row['tokens_pairs_per_s']:,.0f} "
            f"| {row['speedup']:.2f}× | {row['max_abs_diff']:.1e} |"
        )


if __name__ == "__main__":
    main()
