"""Internal (module paths may change): models and CPU plumbing below the contract: checkpoints, the Hub, loading, kernels, threads,
token-budget batching, sharding, progress.

* ``models.py``: ids, folders, aliases, offline errors
* ``model_files.py``: a model folder's files checked
* ``hub.py``: the Hub: snapshot commits, reachability
* ``loading.py``: every model load: one lock, so threads can build scorers; quiet unless progress
* ``gemm.py``: CPU linear kernel, chosen by measurement
* ``kernel_label.py``: the signature's ``kernel`` field (CPU linear kernel, or CUDA settings)
* ``kernel_cache.py``: gemm's kernel/dtype measurements kept on disk per machine and model
* ``product_rows.py``: the rows a CPU matrix product runs on (batch invariance, bounded kernel memory)
* ``cuda_kernels.py``: CUDA forwards: SDPA without cuDNN attention (a graph per shape); their signature label
* ``packed_weights.py``: oneDNN's blocked copy of a linear weight, made once (capped)
* ``packed_attention.py``: the token forwards' pieces: attention per packed sequence (varlen), row-invariant products, the switch
* ``graph_buckets.py``: CUDA graphs' token buckets: a batch padded to its bucket with filler sequences, the bounded graph cache, the switch
* ``transfer.py``: host-to-device copies that do not stop the host (pinned, non-blocking)
* ``text_tokens.py``: a text's content token ids, the same in the scorer's process and a server's worker
* ``threads.py``: torch threads from the process's CPUs: affinity, cgroup quota
* ``extras.py``: optional dependencies, one-line "pip install 'nlgscore[x]'" errors
* ``tables.py``: constants as data
* ``retry_after.py``: the wait before an HTTP client retries (RFC 9110 Retry-After, capped)
* ``batching.py``: token-budget plans, OOM back-off
* ``distributed.py``: accelerate sharding
* ``progress.py``: one bar per call, counted in input lines

Nothing here imports the contract: only the floor below it (``nlgscore.errors``).
"""
