#!/usr/bin/env python
"""SummEval, each summary against its WHOLE source: BERTScore with windows vs truncation.

    python -m benchmarks long_inputs_summeval --data ../shared/data/sum-summeval.jsonl [--out FILE.json]

MiniLM layer 4 (the embedded model), candidate = system summary, reference = the source
document. For each of P/R/F and each SummEval aspect: the summary-level Kendall tau (per document
across its 16 systems, averaged; :func:`nlgscore.meta.stats.summary.document_correlations`) with
``long_inputs="auto"`` (windows) and ``"truncate"`` (512 tokens), each with a 95% percentile
bootstrap interval over documents, and the paired difference auto - truncate with its interval.
Also: how many sources exceed 512 tokens, and the bf16 - fp32 difference of the windowed scores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

ASPECTS = ("coherence", "consistency", "fluency", "relevance")
COLUMNS = ("precision", "recall", "f1")


def load(path):
    docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    systems = sorted(docs[0]["systems"])
    cands = [d["systems"][s]["text"] for d in docs for s in systems]
    srcs = [d["src"] for d in docs for s in systems]
    human = {a: np.array([[d["systems"][s]["scores"][a] for s in systems] for d in docs]) for a in ASPECTS}
    return docs, systems, cands, srcs, human


def main(argv=None) -> int:
    from nlgscore.bertscore import BERTScorer
    from nlgscore.meta.stats.resample import bootstrap_ci
    from nlgscore.meta.stats.summary import per_document_correlations

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data/sum-summeval.jsonl")
    parser.add_argument("--out", default=None)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args(argv)
    docs, systems, cands, srcs, human = load(args.data)
    scores, seconds = {}, {}
    for mode, dtype in (("auto", None), ("truncate", None), ("auto-bf16", "bfloat16")):
        scorer = BERTScorer(model_type="minilm", num_layers=4, long_inputs=mode.split("-")[0], dtype=dtype)
        start = time.perf_counter()
        result = scorer.compute(cands, srcs)
        seconds[mode] = time.perf_counter() - start
        scores[mode] = {c: np.asarray(getattr(result, c)).reshape(len(docs), len(systems)) for c in COLUMNS}
        if mode == "auto":
            windows = np.asarray(result.windows).reshape(len(docs), len(systems))[:, 0]
            lengths = [len(x) for x in scorer.encoder.tokenize([d["src"] for d in docs], truncate=False)[0]]
    table = []
    for column in COLUMNS:
        for aspect in ASPECTS:
            row = {"column": column, "aspect": aspect}
            per_doc = {
                m: per_document_correlations(human[aspect], scores[m][column], "kendall") for m in ("auto", "truncate")
            }
            both = ~np.isnan(per_doc["auto"]) & ~np.isnan(per_doc["truncate"])
            for m in ("auto", "truncate"):
                ci = bootstrap_ci(np.mean, (per_doc[m][both],), n_samples=args.samples)
                row[m] = [ci.value, ci.low, ci.high]
            diff = bootstrap_ci(
                lambda a, b: float(np.mean(a - b)),
                (per_doc["auto"][both], per_doc["truncate"][both]),
                n_samples=args.samples,
            )
            row["difference"] = [diff.value, diff.low, diff.high]
            row["documents"] = int(both.sum())
            table.append(row)
    long_docs = np.array(lengths) > 512
    bf16 = {c: np.abs(scores["auto-bf16"][c] - scores["auto"][c]) for c in COLUMNS}
    out = {
        "documents": len(docs),
        "systems": len(systems),
        "sources_over_512_tokens": int(long_docs.sum()),
        "source_tokens": {"median": float(np.median(lengths)), "max": int(max(lengths))},
        "windows_per_long_source": {"mean": float(windows[long_docs].mean()), "max": int(windows.max())},
        "table": table,
        "bf16_minus_fp32_auto": {
            c: {
                "max_abs": float(bf16[c].max()),
                "mean_abs": float(bf16[c].mean()),
                "mean_abs_long_sources": float(bf16[c][long_docs].mean()),
            }
            for c in COLUMNS
        },
        "bf16_kendall": {
            a: float(np.nanmean(per_document_correlations(human[a], scores["auto-bf16"]["precision"], "kendall")))
            for a in ASPECTS
        },
        "seconds": seconds,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
