"""What the GPU check runs: its sections, their sizes and time boxes, and the precision settings.

Two sizes: the real one (``tiny=False``: WMT19 kk-en pairs, roberta-large-, BART-large- and
Prism-shaped models, MBR with N = 32 and 128, 64 serving clients) sized to end within 8 minutes
on an H100 including the wheel install, and ``tiny=True``: the same code on a few items, tiny
models and small N, for the CPU dry run in ``make test`` (its timings mean nothing).

>>> plan = CheckConfig(data="d", out="o", tiny=True)
>>> plan.sections[0], plan.budget("env"), plan.roberta_shape
('env', 120.0, 'roberta-tiny')
>>> sum(CheckConfig(data="d", out="o").budget(s) for s in SECTIONS)  # seconds, at most
465.0
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Optional, Tuple

from nlgscore.errors import ArgumentError

SECTIONS = ("env", "exactness", "bertscore-minilm", "bertscore-large", "seq2seq", "mbr", "serve", "http")
# Seconds per section on the GPU (a hard stop: the section's process is killed, what it recorded
# so far is kept). Their sum, 465 s, plus the install and start-up, stays under 8 minutes.
GPU_BUDGETS = {
    "env": 20,
    "exactness": 60,
    "bertscore-minilm": 45,
    "bertscore-large": 90,
    "seq2seq": 85,
    "mbr": 25,
    "serve": 80,
    "http": 60,
}
TINY_BUDGET = 120  # the CPU dry run: a loaded 2-core machine, no target
DATA_FILE = "wmt-kk-en.jsonl"  # the WMT19 kk-en DARR slice written by benchmarks/gpu/slice.sh
# the project's targets for the roberta-large-shaped model at layer 17.
TARGET_MFU_BF16 = 0.40
TARGET_SPEEDUP_VS_BERT_SCORE = 10.0
PRECISIONS = ("fp32", "tf32", "bf16")


@dataclass
class CheckConfig:
    """Every setting of one GPU check run (all of it is written into the report)."""

    data: str  # folder holding DATA_FILE
    out: str  # where gpu_check.json and gpu_check.log go
    device: str = "cuda"
    tiny: bool = False
    sections: Tuple[str, ...] = SECTIONS
    budgets: Dict[str, float] = field(default_factory=dict)  # overrides of the per-section seconds
    workdir: Optional[str] = None  # random-weight models (default: a temporary folder)

    def __post_init__(self) -> None:
        unknown = [s for s in self.sections if s not in SECTIONS]
        if unknown:
            raise ArgumentError(f"sections must be among {', '.join(SECTIONS)}, got {', '.join(unknown)}")
        if "env" not in self.sections:
            self.sections = ("env",) + tuple(self.sections)  # the matmul peak every MFU is measured against

    def budget(self, section: str) -> float:
        return float(self.budgets.get(section, TINY_BUDGET if self.tiny else GPU_BUDGETS[section]))

    # -- sizes ----------------------------------------------------------------------------
    @property
    def pairs(self) -> int:
        return 24 if self.tiny else 8000  # candidates: better + worse texts of the first rows

    @property
    def repeats(self) -> int:
        return 1 if self.tiny else 3

    @property
    def seq2seq_repeats(self) -> int:
        return 1 if self.tiny else 2  # the authors' BARTScore loop (4 pairs a batch) is the slow side

    @property
    def roberta_shape(self) -> str:
        return "roberta-tiny" if self.tiny else "roberta-large"

    @property
    def seq2seq_pairs(self) -> int:
        return 6 if self.tiny else 1000

    @property
    def mbr_sizes(self) -> Dict[int, int]:
        """N -> items: about as many candidate pairs for each N."""
        return {4: 2, 6: 1} if self.tiny else {32: 64, 128: 16}

    @property
    def serve_items(self) -> int:
        return 8 if self.tiny else 2048

    @property
    def invariance_items(self) -> int:
        return 4 if self.tiny else 64

    @property
    def modes(self) -> Tuple[str, ...]:
        """Precisions of batch invariance and MBR (the dry run: one, each a model load more)."""
        return ("fp32",) if self.tiny else ("bf16", "fp32")

    @property
    def golden_runs(self) -> Optional[Tuple[str, ...]]:
        """The bertscore_minilm.json runs checked (None: all; the dry run checks one, the suite checks all on CPU)."""
        return ("L4",) if self.tiny else None

    @property
    def prism_temperatures(self) -> Tuple[float, ...]:
        return (1.0,) if self.tiny else (1.0, 0.95)

    def as_dict(self) -> Dict[str, Any]:
        return {
            "data": self.data,
            "out": self.out,
            "device": self.device,
            "tiny": self.tiny,
            "sections": list(self.sections),
            "budgets_s": {s: self.budget(s) for s in self.sections},
            "pairs": self.pairs,
            "repeats": self.repeats,
            "roberta_shape": self.roberta_shape,
            "seq2seq_pairs": self.seq2seq_pairs,
            "seq2seq_repeats": self.seq2seq_repeats,
            "mbr_sizes": {str(n): k for n, k in self.mbr_sizes.items()},
            "serve_items": self.serve_items,
            "invariance_items": self.invariance_items,
            "golden_runs": self.golden_runs or "all",
            "modes": list(self.modes),
            "prism_temperatures": list(self.prism_temperatures),
            "targets": {"mfu_bf16": TARGET_MFU_BF16, "speedup_vs_bert_score_fp32": TARGET_SPEEDUP_VS_BERT_SCORE},
        }


@contextmanager
def precision(mode: str) -> Iterator[str]:
    """fp32 matmuls as TF32 (``mode="tf32"``) or in full fp32 (anything else) inside the block.

    Yields the scorer dtype of ``mode``: bf16 is the scorer's ``dtype="bfloat16"``, fp32 and TF32
    are ``"float32"``. Full fp32 is PyTorch's default; it is set explicitly, cuDNN included.
    """
    import torch

    if mode not in PRECISIONS:
        raise ArgumentError(f"precision must be one of {PRECISIONS}, got {mode!r}")
    before = (torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32)
    torch.set_float32_matmul_precision("high" if mode == "tf32" else "highest")
    torch.backends.cudnn.allow_tf32 = mode == "tf32"
    try:
        yield "bfloat16" if mode == "bf16" else "float32"
    finally:
        torch.set_float32_matmul_precision(before[0])
        torch.backends.cudnn.allow_tf32 = before[1]


@contextmanager
def env_switch(name: str, on: bool, value: str = "1") -> Iterator[None]:
    """The environment switch ``name`` set to ``value`` inside the block when ``on``, and unset
    when not (so a side measures the default whatever the caller's environment); restored after.
    Switches are read when a model loads, so a side's scorer is built inside the block.

    >>> with env_switch("NLGSCORE_EXAMPLE_SWITCH", True):
    ...     os.environ["NLGSCORE_EXAMPLE_SWITCH"]
    '1'
    >>> "NLGSCORE_EXAMPLE_SWITCH" in os.environ
    False
    """
    before = os.environ.pop(name, None)
    if on:
        os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)
        if before is not None:
            os.environ[name] = before
