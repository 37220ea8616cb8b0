"""The GPU check: exactness and throughput of nlgscore on one GPU, in under 8 minutes.

``benchmarks/gpu/check.sh`` installs the wheels brought along and runs ``python -m
benchmarks.gpu``; each section (:data:`~benchmarks.gpu.plan.SECTIONS`) runs in its own
time-boxed process and adds to ``$OUT/gpu_check.json`` and ``$OUT/gpu_check.log``. ``--device cpu
--tiny`` is its dry run (benchmarks/tests/test_gpu_check.py). See BENCHMARKS.md "GPU".

>>> from benchmarks.gpu import CheckConfig
>>> CheckConfig(data="d", out="o", sections=("mbr",)).sections
('env', 'mbr')
"""

from benchmarks.gpu.driver import run_check
from benchmarks.gpu.plan import SECTIONS, CheckConfig

__all__ = ["SECTIONS", "CheckConfig", "run_check"]
