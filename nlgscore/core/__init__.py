"""Internal (module paths may change; metric authors import :mod:`nlgscore.extend`): the contract
every metric fulfils (knows no metric): the Scorer template, Call, Result, Signature, Runtime.

* ``base.py``: the Scorer template
* ``call.py``: Call, MatrixCall: a checked call
* ``scorer_like.py``: ScorerLike: what adapters need
* ``inputs.py``: argument checks, Item
* ``context.py``: document context (``context=k``, ``doc_ids``): the previous sentences an item carries
* ``messages.py``: chat messages as text (content parts joined, no text refused), for adapters and endpoints
* ``result.py``: one Result shape
* ``signature.py``: what produced a score, for reports and caches
* ``runtime.py``: the one run-time policy: device, dtype incl. CPU bf16/"auto", budgets, progress
* ``scorer_runtime.py``: the run-time options every scorer owns: Scorer.__init__
* ``options.py``: the option table: every option a metric takes, constructor or call, as every door spells it
* ``long_inputs.py``: the long_inputs= option every scorer takes, LongInputError
* ``cache.py``: TextCache: LRU by count and bytes; ScorerCache; content keys
* ``batcher_hook.py``: where Scorer.acompute's Call queue comes from: a factory the scheduler registers

Nothing here imports a metric, an adapter or the CLI; it imports ``backend/`` (the plumbing
below it); ``Scorer.acompute`` gets its Call queue from the factory ``scheduler/`` registers.
"""
