"""The project's benchmarks and their harness: measured here, never shipped in the wheel.

* :mod:`benchmarks.harness`: nlgscore against bert_score 0.3.13 and a BARTScore-style loop,
  each side in its own worker process (``python -m benchmarks harness``);
* :mod:`benchmarks.gpu`: the GPU check, time-boxed sections on one GPU (``benchmarks/gpu/check.sh``);
* ``benchmarks/scripts/``: one script per workload (serving, the remote client, ``--workers``,
  MBR, scale, long inputs, kernels, threads, CPU bfloat16, batch invariance), each run as
  ``python -m benchmarks NAME``.

The figures, with the machine and the command of each table, are in BENCHMARKS.md.

Run from the repository root (the harness imports ``benchmarks`` and ``nlgscore`` from it). The
user-facing comparison is ``nlgscore bench``, which ships.

>>> from benchmarks.__main__ import scripts
>>> "bench_serve" in scripts()
True
"""
