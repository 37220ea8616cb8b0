"""The load-time kernel and dtype measurements, kept on disk so that each machine and model pays
them once, not at every command (:mod:`nlgscore.backend.gemm`).

A measurement is keyed by everything its answer depends on: the CPU (model name and flags), the
torch version and build, the model's linear weight shapes, the dtypes measured and the probe's
settings. Each key is one small JSON file under ``$NLGSCORE_CACHE/kernels`` (else
``$XDG_CACHE_HOME/nlgscore/kernels``, else ``~/.cache/nlgscore/kernels``), written to a temporary
file and renamed into place, so concurrent writers never leave a torn file (the last rename wins,
and both wrote the same kind of answer). An unreadable or malformed file is measured again.
``NLGSCORE_KERNEL_CACHE=0`` turns the cache off (measure at every load); delete the folder to
measure again after a change the key does not see (a BIOS setting, a new neighbour on the machine).

>>> key = measurement_key(((384, 384),), ("float32",), 3, ("cpu x", "avx2"), "2.13.0")
>>> len(key), key == measurement_key(((384, 384),), ("float32",), 3, ("cpu x", "avx2"), "2.13.1")
(64, False)
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from nlgscore import envs

ENV_SWITCH = envs.KERNEL_CACHE.name
VERSION = 1  # of the file layout and of the probe: a change re-measures everywhere


def cache_folder() -> Optional[Path]:
    """Where measurements are kept, or None when the cache is off."""
    if not envs.KERNEL_CACHE.get():
        return None
    return envs.cache_folder("kernels")


@functools.lru_cache(maxsize=None)  # read per run (kernel_choice, in every signature)
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else :func:`platform.processor`), for reports.

    >>> isinstance(cpu_model(), str)
    True
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@functools.lru_cache(maxsize=None)
def cpu_vendor() -> str:
    """``vendor_id`` of ``/proc/cpuinfo`` (``AuthenticAMD``, ``GenuineIntel``), else ``""``: the
    CPU kernel rule's input (:func:`nlgscore.backend.gemm.kernel_rule`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return next((line.split(":", 1)[1].strip() for line in handle if line.startswith("vendor_id")), "")
    except OSError:
        return ""


def cpu_identity() -> Tuple[str, str]:
    """The CPU's model name and its sorted feature flags (``/proc/cpuinfo``; empty flags elsewhere)."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = next(
                (" ".join(sorted(set(line.split(":", 1)[1].split()))) for line in handle if line.startswith("flags")),
                "",
            )
    except OSError:
        pass
    return cpu_model(), flags


def measurement_key(
    shapes: Sequence[Tuple[int, int]],
    dtypes: Sequence[str],
    runs: int,
    cpu: Tuple[str, str],
    torch_version: str,
    probe: Sequence[Any] = (),
) -> str:
    """SHA-256 of everything a measurement's answer depends on."""
    text = json.dumps([VERSION, list(cpu), torch_version, [list(s) for s in shapes], list(dtypes), runs, list(probe)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(key: str) -> Optional[Dict[str, Tuple[float, float]]]:
    """The stored ``{dtype: (onednn_ms, mkl_ms)}`` of ``key``, or None (absent, off, unreadable,
    malformed: the caller measures again and rewrites the file)."""
    folder = cache_folder()
    if folder is None:
        return None
    try:
        data = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        timings = data.get("timings") if isinstance(data, dict) else None
        if not isinstance(timings, dict):  # e.g. a string, null or a list: as malformed as torn JSON
            return None
        return {str(dtype): (float(pair[0]), float(pair[1])) for dtype, pair in timings.items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def store(key: str, timings: Dict[str, Tuple[float, float]], about: Dict[str, Any]) -> None:
    """Keep ``timings`` for ``key`` (atomically: a temporary file renamed into place); a folder that
    cannot be written is skipped silently (the next load measures again)."""
    folder = cache_folder()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"timings": {d: list(t) for d, t in timings.items()}, **about}, handle)
        os.replace(temporary, folder / f"{key}.json")
    except OSError:
        try:
            os.unlink(temporary)
        except (OSError, NameError):
            pass
