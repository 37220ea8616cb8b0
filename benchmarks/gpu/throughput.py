"""BERTScore throughput on the device, nlgscore against bert_score 0.3.13 in one process.

Sides (all loaded first, then timed in alternating order over the repeats): bert_score 0.3.13 as
it ships (fp32, TF32 off, 64 sentences per batch), and nlgscore in fp32 (TF32 off), TF32 and bf16,
bf16 with SDPA allowed to pick cuDNN attention (what PyTorch does unless told otherwise), and bf16
through the token forward (``NLGSCORE_TOKEN_FORWARD=1``: every layer on packed tokens, varlen
attention, row tiles of one shape, a CUDA graph per token bucket; :mod:`nlgscore.bertscore.token_forward`),
and the same without graphs (``NLGSCORE_CUDA_GRAPHS=0``).
Pairs: the slice's better then worse candidates against their references. Reported per side:
median seconds, pairs/s, tokens/s (the distinct sentences' tokens, each counted once: the work
any exact implementation must do), MFU against the bf16 matmul peak of the ``env`` section (useful
FLOPs, :mod:`benchmarks.harness.flops`) and the padded FLOPs it executed; then max |ΔF| of TF32 and bf16
against nlgscore fp32 (the precision bounds) and of nlgscore fp32 against bert_score.

When the roberta-large-shaped bf16 side misses a target (40% MFU, 10x bert_score's fp32 pairs/s),
or on any CPU dry run, :func:`profile` says where the time goes.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from benchmarks.gpu.inputs import corpus, pairs
from benchmarks.gpu.plan import TARGET_MFU_BF16, TARGET_SPEEDUP_VS_BERT_SCORE, CheckConfig, env_switch, precision
from nlgscore.bertscore.token_forward import ENV_SWITCH as TOKEN_FORWARD_SWITCH

# (label, side, precision): the nlgscore fp32 scorer serves the TF32 side too (same weights).
SIDES = (
    ("bert_score", "bert_score", "fp32"),
    ("nlgscore-fp32", "nlgscore", "fp32"),
    ("nlgscore-tf32", "nlgscore", "tf32"),
    ("nlgscore-bf16", "nlgscore", "bf16"),
    ("nlgscore-bf16-cudnn", "nlgscore", "bf16"),
    ("nlgscore-bf16-tokens", "nlgscore", "bf16"),
    ("nlgscore-bf16-tokens-eager", "nlgscore", "bf16"),
)
# Sides that share another side's loaded scorer (same weights), and those run with SDPA allowed
# to pick cuDNN attention (nlgscore.backend.cuda_kernels: the default leaves it out; this side is
# the before/after of that choice in one run).
SHARED = {
    "nlgscore-tf32": "nlgscore-fp32",
    "nlgscore-bf16-cudnn": "nlgscore-bf16",
    "nlgscore-bf16-tokens-eager": "nlgscore-bf16-tokens",
}
CUDNN_SIDES = ("nlgscore-bf16-cudnn",)
# Sides loaded with the token forward (NLGSCORE_TOKEN_FORWARD=1, nlgscore.bertscore.token_forward:
# every layer on packed tokens, varlen attention): the before/after of that path in one run.
TOKEN_SIDES = ("nlgscore-bf16-tokens",)
# Sides scored with NLGSCORE_CUDA_GRAPHS=0 (the token forward launched kernel by kernel, not replayed
# from its bucket's CUDA graph: nlgscore.bertscore.cuda_graphs).
EAGER_SIDES = ("nlgscore-bf16-tokens-eager",)

MATCHING_OPS = ("aten::amax", "aten::masked_fill", "aten::bmm")  # greedy matching (nlgscore.bertscore.matching)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _load_sides(config: CheckConfig, model: str, layers: int) -> Dict[str, Any]:
    from benchmarks.harness.config import bert_score_available
    from benchmarks.harness.sides import build_side

    loaded: Dict[str, Any] = {}
    for label, side, mode in SIDES:
        if side == "bert_score" and not bert_score_available():
            continue
        if label in SHARED:
            loaded[label] = loaded[SHARED[label]]
            continue
        with precision(mode) as dtype, env_switch(TOKEN_FORWARD_SWITCH, label in TOKEN_SIDES):
            loaded[label] = build_side(
                {
                    "side": side,
                    "model": model,
                    "num_layers": layers,
                    "device": config.device,
                    "dtype": dtype,
                    "batch_size": 64,
                }
            )
    return loaded


def measure(
    config: CheckConfig, context: Dict[str, Any], recorder: Any, model: str, layers: int, described: str, target: bool
) -> None:
    from transformers import AutoConfig

    from benchmarks.harness.flops import count_encoder_batches, encoder_dims, mfu, useful_flops
    from benchmarks.harness.sides import token_lengths

    cands, refs = pairs(config, config.pairs)
    hidden, intermediate = encoder_dims(AutoConfig.from_pretrained(model))
    distinct = list(dict.fromkeys(cands + refs))
    lengths = token_lengths(model, distinct)
    useful = useful_flops(lengths, layers, hidden, intermediate)
    recorder.put(
        "model",
        {
            "described": described,
            "num_layers": layers,
            "hidden": hidden,
            "intermediate": intermediate,
            "pairs": len(cands),
            "distinct_sentences": len(distinct),
            "useful_tokens": sum(lengths),
            "useful_flops": useful,
        },
    )
    sides = _load_sides(config, model, layers)
    if "bert_score" not in sides:
        recorder.put("bert_score_skipped", "bert_score is not installed (the bert-score==0.3.13 wheel)")
    rows: Dict[str, Dict[str, Any]] = {}
    scores: Dict[str, np.ndarray] = {}
    for label, _, mode in SIDES:
        if label not in sides:
            continue
        with precision(mode), _attention(label):
            sides[label].score(cands[:64], refs[:64])  # warm-up: kernels, allocator, autotuning
            with count_encoder_batches(hidden, intermediate, layers) as count:
                scores[label] = np.asarray(sides[label].score(cands, refs), dtype=np.float64)
        rows[label] = {"precision": mode, "executed": count.as_dict(), "seconds": []}
    order = [label for label, _, _ in SIDES if label in sides]
    for rep in range(config.repeats):
        for label in order if rep % 2 == 0 else order[::-1]:
            with precision(dict((s[0], s[2]) for s in SIDES)[label]), _attention(label):
                _sync(config.device)
                start = time.perf_counter()
                sides[label].score(cands, refs)
                _sync(config.device)
                rows[label]["seconds"].append(time.perf_counter() - start)
        recorder.put("sides", _summarise(rows, len(cands), sum(lengths), useful, context, mfu))
    summary = recorder.results["sides"]
    bounds = {
        f"{label}_vs_nlgscore-fp32": float(np.max(np.abs(scores[label] - scores["nlgscore-fp32"])))
        for label in (
            "nlgscore-tf32",
            "nlgscore-bf16",
            "nlgscore-bf16-cudnn",
            "nlgscore-bf16-tokens",
            "nlgscore-bf16-tokens-eager",
        )
    }
    if "bert_score" in scores:
        bounds["nlgscore-fp32_vs_bert_score"] = float(np.max(np.abs(scores["nlgscore-fp32"] - scores["bert_score"])))
        for label in order[1:]:
            summary[label]["speedup_vs_bert_score_fp32"] = statistics.median(
                b / o for b, o in zip(rows["bert_score"]["seconds"], rows[label]["seconds"])
            )
        recorder.put("sides", summary)
    recorder.put("max_abs_diff_f1", bounds)
    bf16 = summary["nlgscore-bf16"]
    missed = []
    if target:
        if (bf16.get("mfu_useful_vs_bf16_peak") or 0.0) < TARGET_MFU_BF16:
            missed.append(f"bf16 MFU {bf16.get('mfu_useful_vs_bf16_peak')} < {TARGET_MFU_BF16}")
        if bf16.get("speedup_vs_bert_score_fp32", 0.0) < TARGET_SPEEDUP_VS_BERT_SCORE:
            missed.append(
                f"speed-up over bert_score fp32 {bf16.get('speedup_vs_bert_score_fp32')} < {TARGET_SPEEDUP_VS_BERT_SCORE}"
            )
        recorder.put("targets_missed", missed)
    if missed or config.tiny:  # where the time goes, on the default forward and on the token forward
        for label, key in (("nlgscore-bf16", "profile_bf16"), ("nlgscore-bf16-tokens", "profile_bf16_tokens")):
            with precision("bf16"), _attention(label):
                recorder.put(
                    key,
                    profile(
                        sides[label], model, cands[:2000], refs[:2000], config.device, rows[label]["executed"], lengths
                    ),
                )


@contextmanager
def _attention(label: str) -> Iterator[None]:
    """``NLGSCORE_CUDNN_ATTENTION=1`` inside the block for the sides of :data:`CUDNN_SIDES`, and
    ``NLGSCORE_CUDA_GRAPHS=0`` for those of :data:`EAGER_SIDES`."""
    from nlgscore.backend.cuda_kernels import ENV_SWITCH
    from nlgscore.bertscore.cuda_graphs import ENV_SWITCH as GRAPHS_SWITCH

    with env_switch(ENV_SWITCH, label in CUDNN_SIDES), env_switch(GRAPHS_SWITCH, label in EAGER_SIDES, "0"):
        yield


def _summarise(
    rows: Dict[str, Dict[str, Any]], n: int, tokens: int, useful: int, context: Dict[str, Any], mfu: Any
) -> Dict[str, Any]:
    peak = (context.get("peak") or {}).get("bf16", {}).get("flops_per_s", 0.0)
    out: Dict[str, Any] = {}
    for label, row in rows.items():
        seconds = statistics.median(row["seconds"]) if row["seconds"] else None
        out[label] = dict(row)
        if seconds:
            out[label].update(
                median_seconds=seconds,
                pairs_per_s=n / seconds,
                tokens_per_s=tokens / seconds,
                mfu_useful_vs_bf16_peak=mfu(useful, seconds, peak),
                mfu_executed_vs_bf16_peak=mfu(row["executed"]["flops"], seconds, peak),
            )
    return out


def profile(
    side: Any, model: str, cands: List[str], refs: List[str], device: str, executed: Dict[str, int], lengths: List[int]
) -> Dict[str, Any]:
    """Where one scoring call's time goes: tokenization, padding, kernels and their launches, matching."""
    import torch
    from torch.profiler import ProfilerActivity
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    distinct = list(dict.fromkeys(cands + refs))
    start = time.perf_counter()
    tokenizer(distinct, truncation=True, max_length=512)
    tokenize_s = time.perf_counter() - start
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    _sync(device)
    with torch.profiler.profile(activities=activities) as prof:
        start = time.perf_counter()
        side.score(cands, refs)
        _sync(device)
        wall = time.perf_counter() - start
    on_device = device.startswith("cuda")
    key = "self_device_time_total" if on_device else "self_cpu_time_total"
    averages = prof.key_averages()
    top = sorted(averages, key=lambda e: getattr(e, key, 0.0), reverse=True)[:10]
    kernels = [e for e in prof.events() if on_device and e.device_type == torch.autograd.DeviceType.CUDA]
    kernel_s = sum(getattr(e, "device_time_total", 0.0) for e in kernels) / 1e6
    busy_s = busy_seconds([(e.time_range.start, e.time_range.end) for e in kernels])
    return {
        "pairs": len(cands),
        "wall_s": wall,
        "tokenize_distinct_s": tokenize_s,
        "padded_over_useful_tokens": executed["padded_tokens"] / max(1, sum(lengths)) if executed else None,
        "kernel_launches": len(kernels),
        "kernel_s": kernel_s if on_device else None,
        "device_busy_fraction": kernel_s / wall if on_device and wall > 0 else None,
        # the time at least one kernel ran (kernels on several streams overlap), over the wall time
        "kernels_busy_fraction": busy_s / wall if on_device and wall > 0 else None,
        "matching_ops_s": sum(getattr(e, key, 0.0) for e in averages if e.key in MATCHING_OPS) / 1e6,
        "top_ops": [{"op": e.key, "s": getattr(e, key, 0.0) / 1e6, "calls": e.count} for e in top],
    }


def busy_seconds(intervals: List[Tuple[float, float]]) -> float:
    """Seconds covered by at least one of ``intervals`` (``(start, end)`` in microseconds, as the
    profiler's events give them).

    >>> busy_seconds([(0, 10), (5, 20), (30, 40)])
    3e-05
    """
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total / 1e6


def minilm_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    """The embedded all-MiniLM-L6-v2 at layer 4 (its real weights)."""
    from benchmarks.gpu.slim import uncovered
    from benchmarks.harness.config import MINILM_LAYERS
    from nlgscore.backend.models import resolve

    path = resolve("minilm").path
    cands, refs = pairs(config, config.pairs)
    missing = uncovered(path, cands + refs)
    if missing:
        raise RuntimeError(
            f"the slim MiniLM wheel does not cover {len(missing)} text(s) of the slice: rebuild it with benchmarks/gpu/wheels.sh"
        )
    measure(config, context, recorder, path, MINILM_LAYERS, "all-MiniLM-L6-v2 (embedded), layer 4", target=False)


def large_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    """A random-weight roberta-large-shaped model at layer 17 (``--model-shape roberta-large``)."""
    from benchmarks.harness.synthetic import BERTSCORE_LAYERS, build_random_model

    shape = config.roberta_shape
    with tempfile.TemporaryDirectory(prefix="gpu-check-", dir=config.workdir) as folder:
        start = time.perf_counter()
        model = build_random_model(shape, os.path.join(folder, shape), corpus(config), device=config.device)
        recorder.put("build_seconds", time.perf_counter() - start)
        measure(
            config,
            context,
            recorder,
            model,
            BERTSCORE_LAYERS[shape],
            f"{shape}-shaped, random weights, layer {BERTSCORE_LAYERS[shape]}",
            target=not config.tiny,
        )
