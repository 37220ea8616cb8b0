"""One side of the MBR benchmark (benchmarks/scripts/bench_mbr.py), in its own process and virtual environment.

    PYTHON benchmarks/scripts/mbr_bench_worker.py SIDE MODEL_FOLDER LAYER THREADS

SIDE is ``nlgscore`` (the project's venv), ``bert_score`` (bert_score 0.3.13 on the expanded
N x (N-1) pairs) or ``mbrs`` (mbrs 0.1.8's ``DecoderMBR`` with its ``MetricBERTScore``; needs
unbabel-comet, so it runs from its own venv). The side loads its model once, then answers one
JSON command per stdin line with one JSON line on stdout:
``{"cmd": "run", "items": [[candidates...], ...]}`` -> ``{"seconds", "cpu_seconds", "best"}`` (``best`` =
chosen index per item). It imports nothing from nlgscore unless SIDE is nlgscore.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, List

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def nlgscore_side(model: str, layer: int) -> Callable[[List[List[str]]], List[int]]:
    from nlgscore.bertscore import BERTScorer
    from nlgscore.mbr import decode

    # NLGSCORE_BENCH_DTYPE=auto shows what bfloat16 buys on a CPU with native bf16 (not the
    # baselines' fp32 numbers, so kept out of the default comparison).
    scorer = BERTScorer(
        model_type=model, num_layers=layer, device="cpu", dtype=os.environ.get("NLGSCORE_BENCH_DTYPE", "float32")
    )
    return lambda items: [choice.best_index for choice in decode(scorer, items)]


def bert_score_side(model: str, layer: int) -> Callable[[List[List[str]]], List[int]]:
    """All items' candidate x other-candidate pairs in one ``score`` call (bert_score de-duplicates
    the sentences of a call, so this is its fastest use), then the row means and argmax here."""
    import bert_score
    import numpy as np

    scorer = bert_score.BERTScorer(model_type=model, num_layers=layer, batch_size=64, device="cpu")

    def run(items: List[List[str]]) -> List[int]:
        cands, refs, owner = [], [], []
        for k, item in enumerate(items):
            for i, cand in enumerate(item):
                for j, ref in enumerate(item):
                    if i != j:
                        cands.append(cand)
                        refs.append(ref)
                        owner.append(k)
        f1 = scorer.score(cands, refs)[2].numpy().astype(np.float64)
        best, start = [], 0
        for item in items:
            n = len(item)
            rows = f1[start : start + n * (n - 1)].reshape(n, n - 1)
            best.append(int(np.argmax(rows.mean(axis=1))))
            start += n * (n - 1)
        return best

    return run


def mbrs_side(model: str, layer: int) -> Callable[[List[List[str]]], List[int]]:
    """mbrs as its README shows: ``MetricBERTScore`` + ``DecoderMBR``, one ``decode`` per item
    with the candidates as their own pseudo-references (mbrs encodes them once)."""
    from mbrs.decoders import DecoderMBR
    from mbrs.metrics import MetricBERTScore

    metric = MetricBERTScore(MetricBERTScore.Config(model_type=model, num_layers=layer, batch_size=64, cpu=True))
    decoder = DecoderMBR(DecoderMBR.Config(), metric)
    return lambda items: [int(decoder.decode(item, item, nbest=1).idx[0]) for item in items]


SIDES = {"nlgscore": nlgscore_side, "bert_score": bert_score_side, "mbrs": mbrs_side}


def main(argv: List[str]) -> int:
    side, model, layer, threads = argv[0], argv[1], int(argv[2]), int(argv[3])
    import torch

    torch.set_num_threads(threads)
    run = SIDES[side](model, layer)
    out = sys.stdout
    sys.stdout = sys.stderr  # library chatter must not corrupt the answer channel
    print(json.dumps({"ready": side, "torch": torch.__version__}), file=out, flush=True)
    for line in sys.stdin:
        command: Any = json.loads(line)
        if command["cmd"] == "stop":
            break
        start, cpu = time.perf_counter(), time.process_time()
        with torch.inference_mode():
            best = run(command["items"])
        # CPU seconds of this process (all its threads): less sensitive than wall time to other
        # processes taking the cores on a shared machine
        answer = {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu, "best": best}
        print(json.dumps(answer), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
