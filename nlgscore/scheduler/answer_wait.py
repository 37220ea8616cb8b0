"""Awaiting a queued call's answer on an event loop: within its deadline, and no longer than its
client stays.

A server's request waits for its call while the client may give up (an RL trainer's timeout and
retry). The client's leaving is watched as an event, as TEI does, not polled: the call is
cancelled the moment the ASGI server reports ``http.disconnect``, so a call queued for a client
that left is dropped unscored however short its wait (a poll every 0.25 s missed every call
scored sooner, and cost a check per waiting request).

>>> import asyncio, time
>>> from concurrent.futures import Future
>>> from nlgscore.core.call import CallCancelled
>>> class Call:
...     def cancel(self): self.cancelled = True
>>> async def left(): return None  # a client that is already gone
>>> call = Call()
>>> try:
...     asyncio.run(wait_for_answer(Future(), call, None, left))
... except CallCancelled as err:
...     print(err, call.cancelled)
the client disconnected before its call was scored True
>>> answered = Future(); answered.set_result(0.5)
>>> asyncio.run(wait_for_answer(answered, Call(), time.monotonic() + 1, None))
0.5
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Optional

from nlgscore.core.call import CallCancelled
from nlgscore.scheduler.loop_relay import relay

__all__ = ["wait_for_answer"]


async def wait_for_answer(
    queued: Future,
    call: Any,
    deadline: Optional[float],
    disconnected: Optional[Callable[[], Awaitable[Any]]] = None,
    stop: Optional["asyncio.Future[Any]"] = None,
) -> Any:
    """The answer of ``queued`` (the future of ``call``, already submitted). Past ``deadline`` (a
    ``time.monotonic()``) TimeoutError; when ``disconnected()`` returns first (the client left),
    or ``stop`` (a future shared by every waiter: a server's drain ran out of time) is done,
    :class:`~nlgscore.core.call.CallCancelled`. Either way ``call`` is cancelled: a queued call is
    then dropped, a running call stops between its batches. A ``disconnected()`` that fails (the
    watch broke, not the client) stops the watch only: the call is never refused for it."""
    future = relay(queued)  # a run's answers reach the loop in one wake-up, not one each
    gone = None if disconnected is None else asyncio.ensure_future(disconnected())
    try:
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            waits = {future} if gone is None else {future, gone}
            if stop is not None:
                waits.add(stop)
            done, _ = await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if future in done:
                return future.result()
            if stop is not None and stop in done:
                raise CallCancelled("the server stopped waiting for this call")
            if gone is None or gone not in done:
                raise TimeoutError("the call's deadline passed before it was scored")
            if gone.cancelled() or gone.exception() is not None:
                gone = None
                continue
            raise CallCancelled("the client disconnected before its call was scored")
    except BaseException:
        call.cancel()
        future.cancel()
        raise
    finally:
        if gone is not None and not gone.done():
            gone.cancel()
