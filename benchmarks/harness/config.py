"""What a benchmark run depends on (:class:`BenchConfig`) and the machine it runs on."""

from __future__ import annotations

import importlib.util
import os
import platform
import statistics
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple

from nlgscore.errors import ArgumentError

SECTIONS = ("bertscore", "trainer", "memory", "bartscore", "budgets")
DEFAULT_SECTIONS = ("bertscore", "trainer", "memory", "bartscore")
MINILM_LAYERS = 4  # the embedded MiniLM at layer 4, its default


@dataclass
class BenchConfig:
    """Everything a benchmark run depends on (recorded in the JSON report)."""

    data: str
    n: int = 2000
    repeats: int = 3
    device: str = "cpu"
    dtype: str = "float32"
    model_shape: str = "minilm"  # "minilm" (the embedded real model) or a synthetic shape
    num_layers: Optional[int] = None
    max_tokens: Optional[int] = None  # nlgscore's token budget; None = the library default
    bert_score_batch_size: int = 64  # bert_score's default
    bart_n: int = 256  # the reference-style loop runs ~12 pairs/s on 2 cores: ~20 s per repeat
    bart_shape: str = "bart-base"
    bart_model: Optional[str] = None  # an existing seq2seq checkpoint instead of a random bart_shape
    memory_n: int = 20000
    sections: Tuple[str, ...] = DEFAULT_SECTIONS
    budgets: Tuple[int, ...] = (1024, 2048, 4096, 8192)
    threads: Optional[int] = None
    workdir: Optional[str] = None  # where random-weight models are written (default: a temp dir)
    command: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.sections) - set(SECTIONS)
        if unknown:
            raise ArgumentError(f"sections must be among {SECTIONS}, got {sorted(unknown)}")
        if self.repeats < 1:
            raise ArgumentError(f"repeats must be positive, got {self.repeats}")
        for name in ("n", "bart_n", "memory_n"):
            if getattr(self, name) < 1:
                raise ArgumentError(f"{name} must be positive, got {getattr(self, name)}")


def bert_score_available() -> bool:
    """Whether bert_score (the optional ``[bench]`` extra) is importable."""
    return importlib.util.find_spec("bert_score") is not None


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def max_abs_diff(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise RuntimeError(f"the two sides returned {len(a)} and {len(b)} scores")
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


def machine_info(device: str) -> Dict[str, Any]:
    """CPU model, core count, GPU name and library versions, for the report."""
    import torch
    import transformers

    from nlgscore.backend.kernel_cache import cpu_model
    from nlgscore.version import __version__

    info: Dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {"nlgscore": __version__, "torch": torch.__version__, "transformers": transformers.__version__},
    }
    if bert_score_available():
        from importlib.metadata import version

        info["versions"]["bert_score"] = version("bert-score")
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info
