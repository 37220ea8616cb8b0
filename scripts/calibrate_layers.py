#!/usr/bin/env python
"""Choose BERTScore's default layer for a model on human judgments, as the BERTScore paper does.

    python scripts/calibrate_layers.py --data data [--model minilm] [--validation wmt21-seg] [--write]

Every layer is scored in one pass (``all_layers``). ``--validation wmt21-seg`` (default) is the
paper's criterion: F Pearson with segment-level DA z on the corrected WMT21 de-en, also printing
daRR tau from DA and system Pearson; ``wmt19-darr`` picks the best F daRR tau averaged over WMT19
kk-en and gu-en (the test sets of the embedded model's calibration; use it for other models only).
``--write`` stores the layer as the model's entry in ``nlgscore/data/bertscore_model2layers.json``.
For the embedded model, ``scripts/readme_table.py`` does the calibration and writes the tables in
one run. Logic: ``nlgscore.calibration.layers``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nlgscore.calibration import layers as calibrate
from nlgscore.meta.data import loaders, wmt21
from nlgscore.meta.data.wmt21 import load_wmt21

TABLE = Path(__file__).resolve().parents[1] / "nlgscore" / "data" / "bertscore_model2layers.json"
DARR_LPS = ("kk-en", "gu-en")


def _wmt21(args, scorer) -> int:
    data = load_wmt21(args.data / "wmt21-de-en")
    judgments = wmt21.wmt21_judgments(data, include_human=args.include_human)
    hyps, refs = wmt21.wmt21_inputs(data, judgments)
    scores = calibrate.score_all_layers(scorer, hyps, refs, args.cache).reshape(
        3, -1, len(judgments.systems), len(data.ref)
    )
    measures = calibrate.wmt21_layer_measures(judgments, scores)
    best, correlations = calibrate.calibrate_wmt21(judgments, scores)
    print(
        f"WMT21 de-en: {len(judgments.systems)} systems, {int(judgments.judged.sum())} judged segments, "
        f"{len(judgments.pairs)} daRR pairs"
    )
    print("layer  " + "  ".join(f"{c}:seg-r  {c}:seg-tau  {c}:sys-r" for c in calibrate.COLUMNS))
    for layer in range(scores.shape[1]):
        cells = [
            f"{m['seg_pearson']:7.4f}  {m['seg_tau']:7.4f}    {m['sys_pearson']:7.4f}"
            for m in (measures[(column, layer)] for column in calibrate.COLUMNS)
        ]
        print(f"{layer:5d}  " + "  ".join(cells) + ("   <- best F seg-r" if layer == best else ""))
    print(f"best layer: {best} (F segment Pearson {correlations[best]:.4f})")
    return best


def _wmt19(args, scorer) -> int:
    concordances = []
    for lp in DARR_LPS:
        darr = loaders.load_darr(loaders.darr_path(lp, args.data))
        concordances.append(calibrate.darr_layer_concordance(scorer, darr, args.cache))
        print(f"WMT19 {lp}: {len(darr)} daRR pairs")
    best, taus = calibrate.calibrate_darr(concordances)
    print("layer  " + "  ".join(f"{c}:{lp}" for lp in DARR_LPS for c in calibrate.COLUMNS) + "  F:mean")
    for layer in range(len(taus)):
        cells = [f"{c[k, layer].mean():7.4f}" for c in concordances for k in range(3)]
        print(f"{layer:5d}  " + "  ".join(cells) + f"  {taus[layer]:.4f}" + ("   <- best" if layer == best else ""))
    print(f"best layer: {best} (mean F daRR tau {taus[best]:.4f})")
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="data folder (default: loaders.default_data_dir())")
    parser.add_argument("--model", default="minilm", help="model id, folder or alias (default: minilm)")
    parser.add_argument(
        "--validation",
        choices=("wmt19-darr", "wmt21-seg"),
        default="wmt21-seg",
        help="judgments the layer is chosen on (default: wmt21-seg)",
    )
    parser.add_argument(
        "--include-human", action="store_true", help="wmt21-seg: also evaluate HUMAN (ref.B) as a system"
    )
    parser.add_argument(
        "--cache", type=Path, default=None, help="folder for score files shared with scripts/readme_table.py"
    )
    parser.add_argument("--write", action="store_true", help="write the chosen layer into bertscore_model2layers.json")
    args = parser.parse_args(argv)
    args.data = args.data or loaders.default_data_dir()

    from nlgscore.calibration.baseline import all_layers_scorer

    start = time.perf_counter()
    # References repeat across systems and pairs: the cache encodes each once.
    scorer = all_layers_scorer(args.model, progress=True, cache_references=True)
    best = (_wmt21 if args.validation == "wmt21-seg" else _wmt19)(args, scorer)
    print(f"{scorer.model_type}: {time.perf_counter() - start:.0f} s")
    if args.write:
        # The table is keyed by model id; an alias is looked up by the name it resolves to.
        calibrate.set_table_entry(str(TABLE), scorer.model_type, best)
        print(f"wrote {scorer.model_type!r}: {best} to {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
