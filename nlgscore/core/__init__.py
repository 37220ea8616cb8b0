"""The machinery every metric shares and no metric owns.

``base.py`` (the Scorer template: checks, reference flattening and aggregation, dedup, sharding),
``result.py`` (the one Result shape), ``signature.py``, ``inputs.py`` (argument checks),
``runtime.py`` (the one run-time policy: device, dtype, budgets, progress, accelerator),
``scorer_runtime.py`` (the run-time options every scorer owns), ``version.py`` (``__version__``),
``loading.py`` (every model load, serialised and quiet), ``batching.py`` (token-budget plans, OOM
back-off), ``cache.py``
(text caches and content keys), ``models.py`` (resolving checkpoints), ``model_files.py``
(checking a model folder's files), ``hub.py``, ``distributed.py`` (accelerate sharding), ``tables.py`` (constants as
data), ``gemm.py`` (CPU linear kernels), ``extras.py`` (optional dependencies). Nothing here
imports a metric, an adapter or the CLI.
"""
