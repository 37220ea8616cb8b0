#!/usr/bin/env python
"""Compute a BERTScore rescale baseline file (``LAYER,P,R,F``) for any model and corpus.

    python scripts/compute_baseline.py --model minilm \\
        --corpus data/wmt21-de-en/ref.A.en --corpus data/wmt-kk-en.jsonl \\
        --pairs 100000 --seed 1 --out baselines/en/all-MiniLM-L6-v2.tsv

A corpus is a text file with one sentence per line, or a WMT daRR ``.jsonl`` file (its
references). The logic lives in ``nlgscore.calibration.baseline``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from nlgscore.calibration.baseline import (
    DEFAULT_GROUP_SIZE,
    all_layers_scorer,
    compute_baseline,
    load_corpora,
    write_baseline,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="model id, folder or alias (e.g. minilm)")
    parser.add_argument(
        "--corpus",
        action="append",
        required=True,
        type=Path,
        help="sentence file (one a line) or WMT daRR .jsonl; repeatable",
    )
    parser.add_argument("--pairs", type=int, required=True, help="number of random sentence pairs")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    parser.add_argument("--out", type=Path, required=True, help="output file, e.g. baselines/en/MODEL.tsv")
    parser.add_argument("--lang", default="en", help="language of the corpus (recorded only; default: en)")
    parser.add_argument(
        "--group-size",
        type=int,
        default=DEFAULT_GROUP_SIZE,
        help=f"sentences per sampling group (default: {DEFAULT_GROUP_SIZE})",
    )
    parser.add_argument("--device", default=None, help="torch device (default: CUDA if available)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    sentences = load_corpora(args.corpus)
    scorer = all_layers_scorer(args.model, device=args.device)
    estimate = compute_baseline(
        sentences, args.pairs, args.seed, scorer=scorer, group_size=args.group_size, progress=True
    )
    write_baseline(estimate.mean, args.out)
    elapsed = time.perf_counter() - start
    print(
        f"{args.out}: {scorer.model_type} ({args.lang}), {estimate.n_pairs} pairs in {estimate.n_groups} groups "
        f"from {estimate.n_sentences} distinct sentences, seed {args.seed}, {elapsed:.0f} s "
        f"({estimate.n_pairs / elapsed:.0f} pairs/s)"
    )
    print("layer  mean P    mean R    mean F    std F(pair)  sem F(pairs)  sem F(groups)")
    for layer in range(estimate.mean.shape[0]):
        p, r, f = estimate.mean[layer]
        print(
            f"{layer:5d}  {p:.6f}  {r:.6f}  {f:.6f}  {estimate.pair_std[layer, 2]:.6f}     "
            f"{estimate.pair_sem[layer, 2]:.6f}      {estimate.group_sem[layer, 2]:.6f}"
        )
    print(
        f"max sem over layers and P/R/F: pairs {np.max(estimate.pair_sem):.6f}, groups {np.nanmax(estimate.group_sem):.6f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
