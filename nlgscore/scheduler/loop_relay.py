"""Answers of a worker thread handed to an event loop, many per wake-up.

``asyncio.wrap_future`` wakes the loop once per answer: the worker thread writes to the loop's
self-pipe and the loop makes a pass for each. A micro-batcher answers a run of calls at once (64
single-item calls: 64 answers within microseconds), so :func:`relay` hands all the answers that
are ready to the loop in one wake-up; what each awaiting caller gets is what ``wrap_future``
gives it (the result, the exception, or a cancellation, which also cancels the answer).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from concurrent.futures import Future
from typing import Any, List, Tuple

__all__ = ["relay"]


class _LoopRelay:
    """Answers from worker threads to one event loop: the first answer ready asks for a wake-up,
    the answers ready until it comes ride on it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # the relays' table is keyed by the loop: never keep it alive
        self._lock = threading.Lock()
        self._ready: List[Tuple[Future, "asyncio.Future[Any]"]] = []

    def deliver(self, answer: Future, waiter: "asyncio.Future[Any]") -> None:
        """``answer`` is done (on any thread): hand it to ``waiter`` on the loop."""
        with self._lock:
            self._ready.append((answer, waiter))
            wake = len(self._ready) == 1  # later answers ride on the wake-up already asked for
        loop = self._loop()
        if wake and loop is not None:
            try:
                loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # the loop is closed: nobody awaits these answers any more
                pass

    def _drain(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, []
        for answer, waiter in ready:
            if waiter.done():
                continue
            if answer.cancelled():
                waiter.cancel()
            elif answer.exception() is not None:
                waiter.set_exception(answer.exception())  # type: ignore[arg-type]
            else:
                waiter.set_result(answer.result())


_RELAYS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopRelay]" = weakref.WeakKeyDictionary()
_RELAYS_LOCK = threading.Lock()


def relay(answer: Future) -> "asyncio.Future[Any]":
    """``answer`` (a ``concurrent.futures.Future``) as a future of the running loop, as
    ``asyncio.wrap_future`` makes it (cancelling the awaited future cancels ``answer``), with the
    answers of one run handed to the loop in one wake-up.

    >>> async def main():
    ...     answer = Future()
    ...     waiter = relay(answer)
    ...     threading.Thread(target=answer.set_result, args=(42,)).start()
    ...     return await waiter
    >>> asyncio.run(main())
    42
    """
    loop = asyncio.get_running_loop()
    with _RELAYS_LOCK:
        hub = _RELAYS.get(loop)
        if hub is None:
            hub = _RELAYS[loop] = _LoopRelay(loop)
    waiter = loop.create_future()
    waiter.add_done_callback(lambda done: answer.cancel() if done.cancelled() else None)
    answer.add_done_callback(lambda done: hub.deliver(done, waiter))
    return waiter
