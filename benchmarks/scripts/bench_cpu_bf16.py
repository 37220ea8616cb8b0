"""BERTScore on CPU in float32 vs bfloat16, side by side in one process (BENCHMARKS.md "CPU bfloat16").

Two encoders: the embedded MiniLM at layer 4 (the default) and a roberta-large-shaped model
(``RobertaConfig`` of roberta-large: 24 layers, hidden 1024, 16 heads, FFN 4096) with random
weights, built offline into a temporary folder with the MiniLM tokenizer and scored at layer 17
(bert_score's default for roberta-large). Its scores are meaningless (random weights), so its daRR
tau is reported for completeness only; its time and |dF| are what it is for.

Candidates are the daRR ``better`` and ``worse`` translations of the first ``--rows`` rows of a
WMT19 daRR file, each against its reference. The pairs are split into ``--chunks`` chunks and the
two dtypes alternate chunk by chunk, so a busy phase of a shared machine hits both. Prints one
JSON object: CPU model and bf16 flags, per model the pairs/s of each dtype, max |dF|, daRR tau of
each, and what ``dtype="auto"`` resolved to with its load-time measurement.

    python -m benchmarks bench_cpu_bf16 --data ../shared/data/wmt-kk-en.jsonl --rows 2000 --large-rows 500
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np


def cpu_facts() -> dict:
    """``lscpu``'s model name and the bf16/AMX flags of this CPU."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        text = ""
    facts = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    flags = facts.get("Flags", "").split()
    return {
        "model": facts.get("Model name", "?").strip(),
        "cpus": facts.get("CPU(s)", "?").strip(),
        "bf16_flags": sorted(f for f in flags if "bf16" in f or f.startswith("amx")),
    }


def build_large(folder: str) -> str:
    """A random roberta-large-shaped encoder with the MiniLM tokenizer, saved to ``folder``."""
    import torch
    from transformers import AutoTokenizer, RobertaConfig, RobertaModel

    from nlgscore.backend.models import resolve

    minilm = resolve("minilm").path
    tokenizer = AutoTokenizer.from_pretrained(minilm)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=1024,
        num_hidden_layers=24,
        num_attention_heads=16,
        intermediate_size=4096,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        layer_norm_eps=1e-5,
    )
    torch.manual_seed(0)
    RobertaModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def compare(model: str, layer: int, cands: list, refs: list, chunks: int) -> dict:
    from nlgscore.bertscore import BERTScorer
    from nlgscore.core import runtime
    from nlgscore.meta.stats.wmt import darr_kendall_tau

    scorers = {
        dtype: BERTScorer(model_type=model, num_layers=layer, device="cpu", dtype=dtype)
        for dtype in ("float32", "bfloat16")
    }
    for scorer in scorers.values():
        scorer.compute(cands[:32], refs[:32])  # warm-up: oneDNN compiles kernels on first use
    seconds = {dtype: 0.0 for dtype in scorers}
    f1 = {dtype: [] for dtype in scorers}
    bounds = np.linspace(0, len(cands), chunks + 1).astype(int)
    for start, stop in zip(bounds[:-1], bounds[1:]):
        for dtype, scorer in scorers.items():
            began = time.perf_counter()
            f1[dtype].extend(scorer.compute(cands[start:stop], refs[start:stop]).f1)
            seconds[dtype] += time.perf_counter() - began
    n = len(cands) // 2
    out = {"model": model, "layer": layer, "pairs": len(cands)}
    for dtype, values in f1.items():
        values = np.asarray(values)
        out[dtype] = {
            "seconds": round(seconds[dtype], 1),
            "pairs_per_s": round(len(cands) / seconds[dtype], 1),
            "darr_tau": round(darr_kendall_tau(values[:n], values[n:]), 4),
        }
    out["max_abs_dF"] = float(np.abs(np.asarray(f1["bfloat16"]) - np.asarray(f1["float32"])).max())
    auto = BERTScorer(model_type=model, num_layers=layer, device="cpu", dtype="auto")
    out["auto"] = {"resolved": auto.runtime.dtype, **runtime.AUTO_CHOICE}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="WMT19 daRR JSONL (ref, better.text, worse.text)")
    parser.add_argument("--rows", type=int, default=2000, help="daRR rows for MiniLM (2 pairs each)")
    parser.add_argument("--large-rows", type=int, default=500, help="daRR rows for the roberta-large-shaped model")
    parser.add_argument("--chunks", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with open(args.data, encoding="utf-8") as handle:
        rows = [json.loads(line) for line, _ in zip(handle, range(max(args.rows, args.large_rows)))]

    def pairs(k: int) -> tuple:
        return [r["better"]["text"] for r in rows[:k]] + [r["worse"]["text"] for r in rows[:k]], [
            r["ref"] for r in rows[:k]
        ] * 2

    report = {"cpu": cpu_facts()}
    report["minilm"] = compare("minilm", 4, *pairs(args.rows), args.chunks)
    print(json.dumps(report["minilm"]), flush=True)
    with tempfile.TemporaryDirectory(prefix="roberta-large-shaped-") as folder:
        report["roberta_large_shaped"] = compare(build_large(folder), 17, *pairs(args.large_rows), args.chunks)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
