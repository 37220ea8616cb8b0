"""The machinery every metric shares and no metric owns.

``base.py`` (the Scorer template), ``result.py``, ``signature.py``, ``inputs.py`` (argument
checks), ``batching.py`` (token-budget plans, OOM back-off), ``models.py`` (resolving and loading
checkpoints), ``hub.py``, ``distributed.py`` (accelerate sharding), ``tables.py`` (constants as
data), ``gemm.py`` (CPU linear kernels), ``extras.py`` (optional dependencies). Nothing here
imports a metric, an adapter or the CLI.
"""
