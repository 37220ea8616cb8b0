"""Torch's CPU threads from the CPUs this process may actually use, not every core of the machine.

torch starts one thread per physical core of the machine. In a container with a CPU quota, or a
process pinned to some cores (``taskset``, a cgroup cpuset, a job scheduler), that oversubscribes
the CPUs it has, and on a shared machine an MBR run was 2.3x slower with every core's thread than
with one. :func:`limit_threads` (called when a scorer's CPU run time is resolved) lowers torch's
thread count to :func:`available_cpus`: the CPUs in the process's affinity mask, capped by the
cgroup CPU quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), rounded up. It never raises a count the
user chose: ``OMP_NUM_THREADS`` or ``torch.set_num_threads`` below that stay, and
``NLGSCORE_THREADS=N`` sets N outright.

Idle threads wait passively. torch's OpenMP threads spin for a while after each parallel region by
default (``OMP_WAIT_POLICY=ACTIVE`` behaviour), burning the cores that the next call, or another
process, needs: on a loaded 2-core machine a one-pair BERTScore call took 76-700 ms with two
spinning threads against 7-16 ms with one, and 512 pairs 3.5x longer. :func:`prefer_passive_wait`
(run by ``import nlgscore``) sets ``OMP_WAIT_POLICY=PASSIVE`` before torch loads, unless the user
set it or torch is already imported (OpenMP reads it once, when torch loads its runtime); the
thread count, and so every score's bits, stay as they were.

>>> available_cpus() >= 1
True
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import MutableMapping, Optional

from nlgscore import envs

ENV = envs.THREADS.name
WAIT_POLICY = "OMP_WAIT_POLICY"


def prefer_passive_wait(environ: Optional[dict] = None) -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``environ`` (default: this process's) unless it is set
    or torch is already imported; True when it set it.

    >>> env = {}
    >>> prefer_passive_wait(env) or "torch" in sys.modules, env.get(WAIT_POLICY, "PASSIVE")
    (True, 'PASSIVE')
    >>> prefer_passive_wait({WAIT_POLICY: "ACTIVE"})
    False
    """
    target: MutableMapping[str, str] = os.environ if environ is None else environ
    if WAIT_POLICY in target or "torch" in sys.modules:
        return False
    target[WAIT_POLICY] = "PASSIVE"
    return True


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup", membership: str = "/proc/self/cgroup") -> Optional[float]:
    """CPUs the cgroup quota allows (quota / period), or None without a quota (or no cgroup).

    >>> cgroup_cpu_limit(root="/nonexistent") is None
    True
    """
    try:
        lines = Path(membership).read_text().splitlines()
    except OSError:
        lines = []
    limits = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        relative = path.lstrip("/")
        if controllers == "":  # cgroup v2: <root>/<path>/cpu.max holds "max 100000" or "200000 100000"
            text = _read(Path(root, relative, "cpu.max")) or _read(Path(root, "cpu.max"))
            if text and text.split()[0] != "max":
                quota, period = text.split()[:2]
                limits.append(int(quota) / int(period))
        elif "cpu" in controllers.split(","):  # cgroup v1
            for folder in (
                Path(root, controllers, relative),
                Path(root, "cpu", relative),
                Path(root, "cpu,cpuacct", relative),
            ):
                quota_us, period_us = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
                if quota_us and period_us and int(quota_us) > 0:
                    limits.append(int(quota_us) / int(period_us))
                    break
    return min(limits) if limits else None


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def available_cpus() -> int:
    """CPUs this process may run on: its affinity mask, capped by the cgroup quota (rounded up)."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cgroup_cpu_limit()
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


_DONE = False


def limit_threads(count: Optional[int] = None) -> int:
    """Set torch's CPU threads as the module doc says (once per process); returns the count in use.

    Args:
        count: the threads outright (``nlgscore serve --threads``: the process that builds the
            model is told its count); None: ``NLGSCORE_THREADS``, else :func:`available_cpus`.
    """
    global _DONE
    import torch

    if _DONE and count is None:
        return torch.get_num_threads()
    _DONE = True
    wanted = count if count is not None else envs.THREADS.get()  # a bad value: an error naming the variable
    if wanted is not None:
        torch.set_num_threads(wanted)
    elif torch.get_num_threads() > available_cpus():
        torch.set_num_threads(available_cpus())
    return torch.get_num_threads()
