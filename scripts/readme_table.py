#!/usr/bin/env python
"""Results table of the embedded model (all-MiniLM-L6-v2, alias ``minilm``) for the README.

    python scripts/readme_table.py --data ../shared/data --out docs/embedded_model.md

Every layer's BERTScore (one forward pass gives all layers) and sentBLEU/chrF on WMT19 kk-en
and gu-en (daRR tau) and WMT21 de-en (segment Pearson with DA z, daRR tau from DA, system
Pearson with the official z scores), with bootstrap 95% CIs at segment level. Statistics and
loaders come from ``nlgscore.meta``; the per-layer glue from ``nlgscore.meta.calibrate``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from nlgscore.meta import calibrate, loaders, wmt21
from nlgscore.meta.resample import DEFAULT_SEED, Interval, bootstrap_ci
from nlgscore.meta.scoring import segment_scores
from nlgscore.meta.wmt import darr_concordance, pearson

STRING_METRICS = (("sentbleu", "sentBLEU"), ("chrf", "chrF"))
DARR_LPS = ("kk-en", "gu-en")
# Identical outputs must get clearly more alike DA scores than different ones when the
# segment ids of the DA file match the text files (wmt21.identical_output_agreement).
ALIGNMENT_MARGIN = 0.1
# Column key -> header; the first three are bootstrapped, system level is not (19 systems).
COLUMNS = {
    "kk-en": "WMT19 kk-en seg τ",
    "gu-en": "WMT19 gu-en seg τ",
    "seg_pearson": "WMT21 de-en seg r (DA z)",
    "seg_tau": "WMT21 de-en seg τ (daRR from DA)",
    "sys_pearson": "WMT21 de-en sys r",
}


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _interval(statistic, data: Tuple[np.ndarray, ...], args, name: str) -> Interval:
    """The statistic, with a bootstrap CI for the table's main rows (P/R rows: value only)."""
    if args.bootstrap <= 0 or name[0] in "PR":
        return Interval(float(statistic(*data)), float("nan"), float("nan"))
    return bootstrap_ci(statistic, data, n_samples=args.bootstrap, seed=args.seed)


def _head(data: loaders.Wmt21Data, limit) -> loaders.Wmt21Data:
    """The first ``limit`` segments (all when None), for a quick run."""
    if limit is None:
        return data
    cut = {name: values[:limit] for name, values in data.hyps.items()}
    return loaders.Wmt21Data(data.lp, data.src[:limit], data.ref[:limit], cut,
                             {s: v[:limit] for s, v in data.seg_raw.items()},
                             {s: v[:limit] for s, v in data.seg_z.items()}, data.sys_raw, data.sys_z)


def _wmt21(args, scorer, timings: Dict[str, float]) -> Tuple[Dict[str, Dict[str, Interval]], Dict[str, int]]:
    start = time.perf_counter()
    data = _head(loaders.load_wmt21(Path(args.data) / "wmt21-de-en"), args.limit)
    judgments = wmt21.wmt21_judgments(data)
    hyps, refs = wmt21.wmt21_inputs(data, judgments)
    shape = (len(judgments.systems), len(data.ref))
    per_metric: Dict[str, np.ndarray] = {}
    for spec, name in STRING_METRICS:
        per_metric[name] = np.array(segment_scores(spec, hyps, refs)[0]).reshape(shape)
    timings["WMT21 de-en sentBLEU+chrF"] = time.perf_counter() - start
    start = time.perf_counter()
    layers = calibrate.score_all_layers(scorer, hyps, refs, args.cache).reshape((3, -1) + shape)
    timings["WMT21 de-en BERTScore (all layers)"] = time.perf_counter() - start
    for c, column in enumerate(calibrate.COLUMNS):
        for layer in range(layers.shape[1]):
            per_metric[f"{column}{layer}"] = layers[c, layer]
    results = {}
    for name, scores in per_metric.items():
        items = wmt21.wmt21_items(judgments, scores)
        results[name] = {
            "seg_pearson": _interval(pearson, (items.seg_human, items.seg_metric), args, name),
            "seg_tau": _interval(_mean, (items.concordance,), args, name),
            "sys_pearson": Interval(pearson(items.sys_human, items.sys_metric), np.nan, np.nan),
        }
    counts = {"systems": len(judgments.systems), "judged": int(judgments.judged.sum()), "pairs": len(judgments.pairs)}
    counts.update(wmt21.identical_output_agreement(data, judgments))
    return results, counts


def _darr(args, scorer, lp: str, timings: Dict[str, float]) -> Tuple[Dict[str, Interval], int]:
    darr = loaders.load_darr(loaders.darr_path(lp, args.data)).head(args.limit)
    n = len(darr)
    start = time.perf_counter()
    concordance: Dict[str, np.ndarray] = {}
    for spec, name in STRING_METRICS:
        scores = segment_scores(spec, darr.better + darr.worse, darr.ref * 2)[0]
        concordance[name] = darr_concordance(scores[:n], scores[n:])
    timings[f"WMT19 {lp} sentBLEU+chrF"] = time.perf_counter() - start
    start = time.perf_counter()
    layers = calibrate.darr_layer_concordance(scorer, darr, args.cache)
    timings[f"WMT19 {lp} BERTScore (all layers)"] = time.perf_counter() - start
    for c, column in enumerate(calibrate.COLUMNS):
        for layer in range(layers.shape[1]):
            concordance[f"{column}{layer}"] = layers[c, layer]
    results = {name: _interval(_mean, (values,), args, name) for name, values in concordance.items()}
    return results, n


def _cell(interval: Interval, ci: bool = True) -> str:
    if not ci or np.isnan(interval.low):
        return f"{interval.value:.3f}"
    return f"{interval.value:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def _markdown(table: Dict[str, Dict[str, Interval]], n_layers: int, default: int, notes: List[str], ci: bool) -> str:
    lines = ["| metric | " + " | ".join(COLUMNS.values()) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    brackets = "95% CI in brackets; " if ci else ""
    lines[:0] = [f"Correlation with human judgments of every layer of the embedded model ({brackets}"
                 f"**bold** = default layer {default}).", ""]
    names = [name for _, name in STRING_METRICS] + [f"F{layer}" for layer in range(n_layers)]
    for name in names:
        label = name if not name.startswith("F") else f"BERTScore F, layer {name[1:]}" + (" (default)" if int(name[1:]) == default else "")
        cells = [_cell(table[name][key], ci) for key in COLUMNS]
        if name == f"F{default}":
            label, cells = f"**{label}**", [f"**{c}**" for c in cells]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Precision and recall of every layer (no CIs):", ""]
    lines += ["| layer | " + " | ".join(f"{c} {COLUMNS[k]}" for c in ("P", "R") for k in COLUMNS) + " |",
              "|---" * (2 * len(COLUMNS) + 1) + "|"]
    for layer in range(n_layers):
        cells = [f"{table[f'{c}{layer}'][k].value:.3f}" for c in ("P", "R") for k in COLUMNS]
        lines.append(f"| {layer} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [""] + notes) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="data folder (default: $NLGSCORE_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, required=True, help="markdown file to write")
    parser.add_argument("--model", default="minilm", help="model id, folder or alias (default: minilm)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for 95%% CIs; 0 = none (default: 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default: {DEFAULT_SEED})")
    parser.add_argument("--cache", type=Path, default=None, help="score cache folder shared with calibrate_layers.py")
    parser.add_argument("--limit", type=int, default=None, help="first N daRR pairs / WMT21 segments only (quick check)")
    args = parser.parse_args(argv)
    args.data = args.data or loaders.default_data_dir()

    from nlgscore.bertscore.baseline_compute import all_layers_scorer
    from nlgscore.core.tables import table as data_table

    total = time.perf_counter()
    timings: Dict[str, float] = {}
    # References repeat across systems and daRR pairs: the cache encodes each once.
    scorer = all_layers_scorer(args.model, progress=True, cache_references=True)
    table: Dict[str, Dict[str, Interval]] = {}
    notes = []
    for lp in DARR_LPS:
        results, n = _darr(args, scorer, lp, timings)
        for name, interval in results.items():
            table.setdefault(name, {})[lp] = interval
        notes.append(f"- WMT19 {lp}: {n} daRR pairs (the BARTScore/COMET relative-ranks version).")
    wmt21, counts = _wmt21(args, scorer, timings)
    for name, measures in wmt21.items():
        table.setdefault(name, {}).update(measures)
    notes.append(f"- WMT21 de-en: {counts['systems']} MT systems (HUMAN excluded, as `nlgscore meta wmt21`), "
                 f"reference A; {counts['judged']} judged segments, {counts['pairs']} daRR pairs "
                 "(raw DA differing by more than 25); system r over the systems' mean scores.")
    aligned = counts["r_same"] - counts["r_different"] > ALIGNMENT_MARGIN
    notes.append(f"- WMT21 alignment check: identical translations of a segment by two systems get DA scores "
                 f"correlated at r = {counts['r_same']:.3f} ({counts['n_same']:.0f} score pairs), different "
                 f"translations r = {counts['r_different']:.3f}." if aligned else
                 f"- **WMT21 segment level is not usable with this copy of the data**: two systems with the same "
                 f"translation of a segment get DA scores no more alike (r = {counts['r_same']:.3f} over "
                 f"{counts['n_same']:.0f} score pairs) than two systems with different translations "
                 f"(r = {counts['r_different']:.3f}). The segment ids of `da-seg-scores.csv` do not follow the line "
                 "order of the text files, so every metric, string-based or not, gets r ≈ 0 and a negative τ "
                 "(metric ties count as discordant). System-level scores do not depend on segment ids.")
    default = data_table("bertscore_model2layers").get(scorer.model_type)  # None: no default yet
    n_layers = sum(1 for name in table if name.startswith("F"))
    elapsed = time.perf_counter() - total
    ci = args.bootstrap > 0
    notes.append(f"- 95% CIs: percentile bootstrap over items ({args.bootstrap} resamples, seed {args.seed}) "
                 "for the segment-level columns of sentBLEU, chrF and F; none at system level." if ci else "- No CIs.")
    notes.append(f"- Default layer ({default}): `python scripts/calibrate_layers.py --validation wmt19-darr --write`, "
                 "the best F τ averaged over kk-en and gu-en (the paper's criterion, segment Pearson on WMT21, "
                 "cannot be used, see above); these two sets are also test sets here.")
    notes.append(f"- Signature: `{scorer.signature}`.")
    cached = " (BERTScore scores read from --cache)" if args.cache is not None else ""
    notes.append(f"- Generated by `python scripts/readme_table.py --data DATA --out {args.out}` in {elapsed:.0f} s{cached}.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_markdown(table, n_layers, default, notes, ci), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    for step, seconds in timings.items():
        print(f"{step}: {seconds:.0f} s")
    print(f"total: {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
