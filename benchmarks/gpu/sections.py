"""The sections of the GPU check (``env`` is here; the others in their own modules) and their inputs.

Every section is ``section(config, context, recorder)``: it reads the WMT19 kk-en slice from
``config.data``, measures, and ``recorder.put``s each result as soon as it has it. ``context``
carries what earlier sections measured (the matmul peak).

>>> from benchmarks.gpu.plan import SECTIONS
>>> sorted(SECTION_FUNCTIONS) == sorted(SECTIONS)
True
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from benchmarks.gpu.plan import CheckConfig


def matmul_shapes(config: CheckConfig) -> List[Tuple[int, int, int]]:
    """A large square product and roberta-large's layer products on a 16k-token batch (GPU)."""
    if config.tiny:
        return [(256, 256, 256)]
    return [(8192, 8192, 8192), (16384, 1024, 1024), (16384, 1024, 4096), (16384, 4096, 1024)]


def env_section(config: CheckConfig, context: Dict[str, Any], recorder: Any) -> None:
    """The GPU's facts, then the matmul peak of each precision: the best FLOP/s over :func:`matmul_shapes`."""
    from benchmarks.gpu.machine import gpu_facts
    from benchmarks.gpu.plan import precision
    from benchmarks.harness.flops import matmul_throughput

    recorder.put("gpu", gpu_facts(config.device))
    peaks: Dict[str, Any] = {}
    for mode in ("bf16", "tf32", "fp32"):
        with precision(mode) as dtype:
            sample = matmul_throughput(matmul_shapes(config), config.device, dtype, repeats=3, min_seconds=0.1)
        peaks[mode] = {"flops_per_s": max(s["flops_per_s"] for s in sample["shapes"]), "shapes": sample["shapes"]}
        recorder.put("matmul", peaks)


def _sections() -> Dict[str, Any]:
    from benchmarks.gpu.exactness import exactness_section
    from benchmarks.gpu.mbr_serve import http_section, mbr_section, serve_section
    from benchmarks.gpu.seq2seq import seq2seq_section
    from benchmarks.gpu.throughput import large_section, minilm_section

    return {
        "env": env_section,
        "exactness": exactness_section,
        "bertscore-minilm": minilm_section,
        "bertscore-large": large_section,
        "seq2seq": seq2seq_section,
        "mbr": mbr_section,
        "serve": serve_section,
        "http": http_section,
    }


SECTION_FUNCTIONS = _sections()
