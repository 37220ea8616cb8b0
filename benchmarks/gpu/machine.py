"""The machine a GPU check ran on: CPU, library versions and load (the parent), the GPU's facts (a section).

>>> sorted(k for k in environment() if k in ("torch", "transformers", "loadavg"))
['loadavg', 'torch', 'transformers']
"""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any, Dict


def environment() -> Dict[str, Any]:
    """CPU, library versions and the load average (the GPU's facts: :func:`gpu_facts`, in a section)."""
    import torch
    import transformers

    from nlgscore.backend.kernel_cache import cpu_model
    from nlgscore.version import __version__

    info: Dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "loadavg": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "nlgscore": __version__,
        "torch_threads": torch.get_num_threads(),
    }
    try:
        from importlib.metadata import version

        info["bert_score"] = version("bert-score")
    except Exception:  # not installed: the comparison sides are skipped and say so
        info["bert_score"] = None
    return info


def gpu_facts(device: str) -> Dict[str, Any]:
    """GPU name, memory, driver and clocks (nvidia-smi). It starts CUDA: call it in a section's
    process, never in the parent, whose forked children could not start CUDA after it."""
    import torch

    info: Dict[str, Any] = {}
    if device.startswith("cuda") and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.device(device))
        info.update(
            gpu=props.name,
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            multiprocessors=props.multi_processor_count,
            cudnn=torch.backends.cudnn.version(),
            bf16_supported=torch.cuda.is_bf16_supported(),
        )
        query = "name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu"
        try:
            out = subprocess.run(
                ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            info["nvidia_smi"] = dict(zip(query.split(","), (v.strip() for v in out.stdout.strip().split(","))))
        except (OSError, subprocess.SubprocessError) as err:
            info["nvidia_smi"] = f"not available: {err}"
    return info
