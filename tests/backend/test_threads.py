"""Torch threads follow the CPUs the process may use (README truths: threads): its
affinity mask and the cgroup CPU quota, not every core of the machine; ``NLGSCORE_THREADS`` sets
them. Real processes pinned with ``os.sched_setaffinity``; the cgroup files are real files laid
out as cgroup v1 and v2 lay them out (the machine's own cgroup has no quota to test with)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgscore.backend.threads import cgroup_cpu_limit

ROOT = Path(__file__).resolve().parents[2]
LOAD = (
    "import os, sys, torch; {pin}"
    "import nlgscore; nlgscore.load('bertscore:minilm:L2', device='cpu'); print(torch.get_num_threads())"
)


def threads_after_load(pin: str = "", **env: str) -> int:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NLGSCORE_THREADS")
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD.format(pin=pin)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**environment, "HF_HUB_OFFLINE": "1", **env},
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs and affinity"
)
def test_a_process_pinned_to_one_cpu_runs_one_torch_thread():
    assert threads_after_load("os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); ") == 1


def test_nlgscore_threads_sets_the_count():
    assert threads_after_load(NLGSCORE_THREADS="1") == 1


def test_cgroup_v2_quota(tmp_path):
    (tmp_path / "cgroup").write_text("0::/job/step\n")
    (tmp_path / "fs" / "job" / "step").mkdir(parents=True)
    (tmp_path / "fs" / "job" / "step" / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_limit(str(tmp_path / "fs"), str(tmp_path / "cgroup")) == 1.5
    (tmp_path / "fs" / "job" / "step" / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_limit(str(tmp_path / "fs"), str(tmp_path / "cgroup")) is None


def test_cgroup_v1_quota(tmp_path):
    (tmp_path / "cgroup").write_text("4:memory:/x\n2:cpu,cpuacct:/docker/abc\n")
    folder = tmp_path / "fs" / "cpu,cpuacct" / "docker" / "abc"
    folder.mkdir(parents=True)
    (folder / "cpu.cfs_quota_us").write_text("200000\n")
    (folder / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_limit(str(tmp_path / "fs"), str(tmp_path / "cgroup")) == 2.0
    (folder / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_limit(str(tmp_path / "fs"), str(tmp_path / "cgroup")) is None
