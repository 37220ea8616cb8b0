"""One queued call of a :class:`~nlgscore.scheduler.microbatch.MicroBatcher` (and of the Ray
deployment's batcher built on it): the checked call, its merge key, cost and size, its future,
and when it must be done.

>>> from nlgscore.registry import build
>>> job = QueuedCall(build("chrf").make_call(["It is cold."], ["It is cold today."]), deadline=None)
>>> job.size, job.live(0.0), job.future.running()
(1, True, True)
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any, Hashable, Optional

__all__ = ["QueuedCall"]


class QueuedCall:
    """One queued call (for a batcher built on this one): the checked call, its merge key, cost
    and size, its future, and when it must be done."""

    __slots__ = ("call", "key", "cost", "size", "future", "arrived", "deadline")

    def __init__(self, call: Any, deadline: Optional[float]) -> None:
        self.call = call
        key = call.merge_key
        self.key: Hashable = object() if key is None else key  # a fresh object merges with nothing
        self.cost, self.size = int(call.cost), int(call.size)
        self.future: Future = Future()
        self.arrived = time.monotonic()
        self.deadline = deadline

    def live(self, now: float) -> bool:
        """Whether to score it: not cancelled (its future or its call), not past its deadline."""
        if self.call.cancelled:
            self.future.cancel()
        if self.deadline is not None and now > self.deadline and not self.future.done():
            self.future.set_exception(TimeoutError("the call's deadline passed before it was scored"))
        return self.future.set_running_or_notify_cancel() if not self.future.done() else False
