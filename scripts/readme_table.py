#!/usr/bin/env python
"""Calibrate the embedded model (all-MiniLM-L6-v2, alias ``minilm``) and write its results tables.

    python scripts/readme_table.py --data data --out docs/embedded_model.md \\
        --readme-out readme_table.md [--cache DIR] [--write-layer]

One command, one pass over the data: every layer's BERTScore (one forward pass gives all layers)
and the string baselines on the validation set, WMT21 de-en (corrected DA; the layer with the
highest segment-level Pearson between F and DA z is chosen, the BERTScore paper's criterion), and
on the test sets, WMT19 kk-en and gu-en (daRR tau). Writes ``--out`` (every layer, P/R/F, notes),
``--readme-out`` (the short README table) and, with ``--write-layer``, the chosen layer into
``nlgscore/data/bertscore_model2layers.json``. Statistics come from ``nlgscore.meta``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from nlgscore.calibration import layers as calibrate
from nlgscore.meta.data import loaders
from nlgscore.meta.data.alignment import check_alignment
from nlgscore.meta.data.wmt21 import (
    load_wmt21,
    wmt21_inputs,
    wmt21_items,
    wmt21_judgments,
)
from nlgscore.meta.engine import Scorers
from nlgscore.meta.stats.resample import (
    DEFAULT_SEED,
    Interval,
    bootstrap_ci,
    paired_bootstrap,
)
from nlgscore.meta.stats.wmt import darr_outcomes, pearson, tau_from_outcomes
from nlgscore.meta.tasks.generic import BARTSCORE_SEGMENT

TABLE = Path(__file__).resolve().parents[1] / "nlgscore" / "data" / "bertscore_model2layers.json"
# (spec, row label): segment level uses the spec's sentence score, system level its WMT definition.
STRING_METRICS = (("sentbleu", "sentBLEU"), ("bleu", "BLEU (sys: corpus)"), ("chrf", "chrF (sys: corpus)"))
DARR_LPS = ("kk-en", "gu-en")
# Column key -> header. Validation first (the layer is chosen on seg_pearson), then the tests.
COLUMNS = {
    "seg_pearson": "WMT21 de-en seg r (DA z) — validation",
    "seg_tau": "WMT21 de-en seg τ (daRR from DA; metric ties)",
    "sys_pearson": "WMT21 de-en sys r",
    "kk-en": "WMT19 kk-en seg τ — test",
    "gu-en": "WMT19 gu-en seg τ — test",
}
Cells = Dict[str, Dict[str, Interval]]


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _interval(statistic, data: Tuple[np.ndarray, ...], args, name: str) -> Interval:
    """The statistic, with a bootstrap CI for F and the baselines (P/R rows: value only)."""
    if args.bootstrap <= 0 or name[0] in "PR" and name[1:].isdigit():
        return Interval(float(statistic(*data)), float("nan"), float("nan"))
    return bootstrap_ci(statistic, data, n_samples=args.bootstrap, seed=args.seed)


def _wmt21(args, scorer, timings: Dict[str, float]) -> Tuple[Cells, Dict[str, np.ndarray], dict]:
    start = time.perf_counter()
    data = load_wmt21(Path(args.data) / "wmt21-de-en").head(args.limit)
    judgments = wmt21_judgments(data)
    hyps, refs = wmt21_inputs(data, judgments)
    shape = (len(judgments.systems), len(data.ref))
    outputs = [data.hyps[s] for s in judgments.systems]
    metrics: Dict[str, Tuple[np.ndarray, object]] = {}
    for spec, name in STRING_METRICS:
        seg = np.array(Scorers().score(BARTSCORE_SEGMENT.get(spec, spec), hyps, refs)[0]).reshape(shape)
        metrics[name] = (seg, Scorers().system_scores(spec, outputs, data.ref, seg)[0])
    timings["WMT21 de-en baselines"] = time.perf_counter() - start
    start = time.perf_counter()
    layers = calibrate.score_all_layers(scorer, hyps, refs, args.cache).reshape((3, -1) + shape)
    timings["WMT21 de-en BERTScore (all layers)"] = time.perf_counter() - start
    for c, column in enumerate(calibrate.COLUMNS):
        for layer in range(layers.shape[1]):
            metrics[f"{column}{layer}"] = (layers[c, layer], None)
    cells: Cells = {}
    ties: Dict[str, float] = {}
    for name, (seg, sys_scores) in metrics.items():
        items = wmt21_items(judgments, seg, sys_scores)
        ties[name] = float(np.mean(items.outcomes == 0))
        cells[name] = {
            "seg_pearson": _interval(pearson, (items.seg_human, items.seg_metric), args, name),
            "seg_tau": _interval(tau_from_outcomes, (items.outcomes,), args, name),
            "sys_pearson": Interval(pearson(items.sys_human, items.sys_metric), np.nan, np.nan),
        }
    best, correlations = calibrate.calibrate_wmt21(judgments, layers)
    runner = int(np.argsort(-correlations)[1])
    judged, f = judgments.judged, calibrate.COLUMNS.index("F")
    test = paired_bootstrap(
        pearson,
        (judgments.z[judged], layers[f, best][judged]),
        (judgments.z[judged], layers[f, runner][judged]),
        args.bootstrap or 1000,
        args.seed,
    )
    info = {
        "runner_up": (runner, float(correlations[runner]), test.p_value),
        "r": correlations.tolist(),
        "systems": len(judgments.systems),
        "judged": int(judged.sum()),
        "pairs": len(judgments.pairs),
        "best": best,
        "alignment": check_alignment(outputs, judgments.z).describe(),
    }
    return cells, ties, info


def _darr(args, scorer, lp: str, timings: Dict[str, float]) -> Tuple[Dict[str, Interval], int]:
    darr = loaders.load_darr(loaders.darr_path(lp, args.data)).head(args.limit)
    n = len(darr)
    start = time.perf_counter()
    outcomes: Dict[str, np.ndarray] = {}
    for spec, name in STRING_METRICS:
        scores = Scorers().score(BARTSCORE_SEGMENT.get(spec, spec), darr.better + darr.worse, darr.ref * 2)[0]
        outcomes[name] = darr_outcomes(scores[:n], scores[n:])
    timings[f"WMT19 {lp} baselines"] = time.perf_counter() - start
    start = time.perf_counter()
    layers = calibrate.darr_layer_concordance(scorer, darr, args.cache)
    timings[f"WMT19 {lp} BERTScore (all layers)"] = time.perf_counter() - start
    for c, column in enumerate(calibrate.COLUMNS):
        for layer in range(layers.shape[1]):
            outcomes[f"{column}{layer}"] = layers[c, layer]
    return {
        name: _interval(_mean if name[1:].isdigit() else tau_from_outcomes, (values,), args, name)
        for name, values in outcomes.items()
    }, n


def _cell(interval: Interval, ci: bool = True) -> str:
    if not ci or np.isnan(interval.low):
        return f"{interval.value:.3f}"
    return f"{interval.value:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def _label(name: str, default: int) -> str:
    if not name[1:].isdigit():
        return name
    return f"BERTScore F, layer {name[1:]}" + (" (default)" if int(name[1:]) == default else "")


def _rows(table: Cells, ties: Dict[str, float], names: List[str], default: int, ci: bool) -> List[str]:
    lines = ["| metric | " + " | ".join(COLUMNS.values()) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name in names:
        cells = [_cell(table[name][key], ci) for key in COLUMNS]
        cells[1] += f" ({100 * ties[name]:.0f}% ties)"
        label = _label(name, default)
        if name == f"F{default}":
            label, cells = f"**{label}**", [f"**{c}**" for c in cells]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _markdown(table: Cells, ties: Dict[str, float], n_layers: int, default: int, notes: List[str], ci: bool) -> str:
    brackets = "95% CI in brackets; " if ci else ""
    lines = [
        f"Correlation with human judgments of every layer of the embedded model ({brackets}"
        f"**bold** = default layer {default}).",
        "",
    ]
    names = [name for _, name in STRING_METRICS] + [f"F{layer}" for layer in range(n_layers)]
    lines += _rows(table, ties, names, default, ci)
    lines += ["", "Precision and recall of every layer (no CIs):", ""]
    lines += [
        "| layer | " + " | ".join(f"{c} {COLUMNS[k].split(' — ')[0]}" for c in ("P", "R") for k in COLUMNS) + " |",
        "|---" * (2 * len(COLUMNS) + 1) + "|",
    ]
    for layer in range(n_layers):
        cells = [f"{table[f'{c}{layer}'][k].value:.3f}" for c in ("P", "R") for k in COLUMNS]
        lines.append(f"| {layer} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [""] + notes) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="data folder (default: loaders.default_data_dir())")
    parser.add_argument(
        "--out", type=Path, required=True, help="markdown file with every layer (docs/embedded_model.md)"
    )
    parser.add_argument("--readme-out", type=Path, default=None, help="markdown file with the short README table")
    parser.add_argument("--model", default="minilm", help="model id, folder or alias (default: minilm)")
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples for 95%% CIs; 0 = none (default: 1000)"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default: {DEFAULT_SEED})")
    parser.add_argument("--cache", type=Path, default=None, help="score cache folder shared with calibrate_layers.py")
    parser.add_argument(
        "--limit", type=int, default=None, help="first N daRR pairs / WMT21 segments only (quick check)"
    )
    parser.add_argument(
        "--write-layer", action="store_true", help="store the chosen layer in bertscore_model2layers.json"
    )
    args = parser.parse_args(argv)
    args.data = args.data or loaders.default_data_dir()

    from nlgscore.backend.tables import table as data_table
    from nlgscore.calibration.baseline import all_layers_scorer

    total = time.perf_counter()
    timings: Dict[str, float] = {}
    # References repeat across systems and daRR pairs: the cache encodes each once.
    scorer = all_layers_scorer(args.model, progress=True, cache_references=True)
    table, ties, info = _wmt21(args, scorer, timings)
    notes = []
    for lp in DARR_LPS:
        results, n = _darr(args, scorer, lp, timings)
        for name, interval in results.items():
            table[name][lp] = interval
        notes.append(
            f"- WMT19 {lp} (test): {n} daRR pairs (the BARTScore/COMET relative-ranks version); "
            "τ with metric ties counted as discordant (WMT19 rule)."
        )
    best = info["best"]
    current = data_table("bertscore_model2layers").get(scorer.model_type)
    if args.write_layer and best != current:
        calibrate.set_table_entry(str(TABLE), scorer.model_type, best)
        print(f"wrote {scorer.model_type!r}: {best} to {TABLE} (was {current})")
    default = best if args.write_layer else current
    n_layers = sum(1 for name in table if name.startswith("F") and name[1:].isdigit())
    r = dict(enumerate(info["r"]))
    runner, r_runner, p_runner = info["runner_up"]
    tests = " and ".join(
        f"{lp} τ {table[f'F{best}'][lp].value:.3f} vs {table[f'F{runner}'][lp].value:.3f}" for lp in DARR_LPS
    )
    notes[:0] = [
        f"- WMT21 de-en (validation): corrected DA (SID = line of the text files); {info['systems']} MT systems "
        f"(HUMAN excluded), reference A; {info['judged']} judged segments; {info['pairs']} daRR pairs (raw DA "
        "more than 25 apart, metric ties discordant; the share of pairs a metric ties is in brackets: "
        "byte-identical outputs are a tie for every metric). System r: corpus chrF/BLEU, mean of segments otherwise.",
        f"- {info['alignment']}.",
        f"- Layer choice: the layer with the highest F segment Pearson with DA z on WMT21 de-en, the BERTScore "
        f"paper's criterion: layer {best} (r = {r[best]:.4f}; per layer "
        + ", ".join(f"{k}: {v:.4f}" for k, v in r.items())
        + f"). The runner-up, layer {runner} (r = {r_runner:.4f}), "
        f"is {'not ' if p_runner >= 0.05 else ''}significantly worse (paired bootstrap over segments, p = {p_runner:.3f}); "
        f"on the test sets layer {best} vs {runner}: {tests}. Default in the package: layer {default}.",
    ]
    ci = args.bootstrap > 0
    notes.append(
        f"- 95% CIs: percentile bootstrap over items ({args.bootstrap} resamples, seed {args.seed}) for the "
        "segment-level columns of the baselines and F; none at system level."
        if ci
        else "- No CIs."
    )
    notes.append(f"- Signature: `{scorer.signature}`.")
    elapsed = time.perf_counter() - total
    cached = " (BERTScore scores read from --cache)" if args.cache is not None else ""
    notes.append(
        f"- Generated by `python scripts/readme_table.py --data DATA --out {args.out}` in {elapsed:.0f} s{cached}."
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_markdown(table, ties, n_layers, default, notes, ci), encoding="utf-8")
    short = "\n".join(_rows(table, ties, [name for _, name in STRING_METRICS] + [f"F{default}"], default, ci)) + "\n"
    if args.readme_out:
        args.readme_out.write_text(short, encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    print(short)
    for step, seconds in timings.items():
        print(f"{step}: {seconds:.0f} s")
    print(f"total: {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
