"""The GPU check of issue 34: exactness and throughput of nlgscore on one GPU, in under 8 minutes.

``scripts/gpu_check.sh`` installs the wheels brought along and runs ``python -m
nlgscore.bench.gpu``; each section (:data:`~nlgscore.bench.gpu.plan.SECTIONS`) runs in its own
time-boxed process and adds to ``$OUT/gpu_check.json`` and ``$OUT/gpu_check.log``. ``--device cpu
--tiny`` is its dry run (tests/bench/test_gpu_check.py). See BENCHMARKS.md "GPU".

>>> from nlgscore.bench.gpu import CheckConfig
>>> CheckConfig(data="d", out="o", sections=("mbr",)).sections
('env', 'mbr')
"""

from nlgscore.bench.gpu.driver import run_check
from nlgscore.bench.gpu.plan import SECTIONS, CheckConfig

__all__ = ["SECTIONS", "CheckConfig", "run_check"]
