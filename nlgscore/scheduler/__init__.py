"""Internal: the Call queue that merges concurrent calls into one ``run`` (the public names are in
:mod:`nlgscore.serve`: ``MicroBatcher``; ``Scorer.acompute`` uses it for you).

* ``microbatch.py``: MicroBatcher, the Call queue behind Scorer.acompute and serve
* ``queued_call.py``: QueuedCall, one call on that queue (its future, cost, deadline)
* ``loop_relay.py``: relay, a queued call's answer handed to its event loop (one wake-up for a run's answers)
* ``answer_wait.py``: wait_for_answer, a queued call's answer awaited within its deadline while its client stays

Importing this package registers :class:`~nlgscore.scheduler.microbatch.MicroBatcher` as the
maker of a scorer's own batcher (:mod:`nlgscore.core.batcher_hook`), so the contract never
imports the queue above it; ``import nlgscore`` imports this package. Above the contract
(``core/``), below the metric table, the adapters and the server. Module paths here may change
without notice.
"""

from typing import Any

from nlgscore.core.batcher_hook import register_batcher_factory


def _default_batcher(scorer: Any) -> Any:
    from nlgscore.scheduler.microbatch import MicroBatcher  # asyncio and threads only when a batcher is made

    return MicroBatcher(scorer)


register_batcher_factory(_default_batcher)
