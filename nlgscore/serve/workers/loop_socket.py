"""A ZeroMQ socket read by an asyncio loop's reader callback, every waiting message per wake-up.

``zmq.asyncio`` makes a future, an event registration and a loop pass for every ``recv`` and
``send``: most of the IPC hop's CPU between ``nlgscore serve --workers N``'s processes. Here the
socket's file descriptor is watched with ``loop.add_reader`` and drained without blocking; sends
are plain. ZeroMQ's descriptor is edge-triggered (it signals that the socket's events *may* have
changed, and a send can consume that signal), so every drain reads until ``ZMQ_EVENTS`` shows
nothing waiting, and each send schedules one more look.

>>> import asyncio, tempfile, zmq
>>> async def main(folder):
...     context, got = zmq.Context(), []
...     router, dealer = context.socket(zmq.ROUTER), context.socket(zmq.DEALER)
...     router.bind(f"ipc://{folder}/s"); dealer.connect(f"ipc://{folder}/s")
...     done = asyncio.get_running_loop().create_future()
...     echo = LoopSocket(router, lambda frames: echo.send(frames))
...     back = LoopSocket(dealer, lambda frames: (got.append(frames[0]), len(got) == 3 and done.set_result(None)))
...     for text in (b"a", b"b", b"c"):
...         back.send([text])
...     await done
...     echo.close(); back.close(); context.term()
...     return got
>>> with tempfile.TemporaryDirectory() as folder:
...     asyncio.run(main(folder))
[b'a', b'b', b'c']
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, List

__all__ = ["LoopSocket"]


class LoopSocket:
    """``sock`` (a plain ``zmq.Socket``) on the running loop: ``on_message(frames)`` is called on
    the loop for each message, in order; :meth:`send` sends one. Both ends' queues are unbounded
    (``SNDHWM``/``RCVHWM`` 0): a server's messages in flight are bounded by its admission
    (``--max-concurrent``, ``--max-queue``), and a full queue must neither drop an answer (a
    ROUTER drops at its mark) nor block the loop."""

    def __init__(self, sock: Any, on_message: Callable[[List[bytes]], None]) -> None:
        import zmq

        self.zmq, self.sock, self.on_message = zmq, sock, on_message
        self.loop = asyncio.get_running_loop()
        self.fd = sock.getsockopt(zmq.FD)
        self.looking = False
        self.loop.add_reader(self.fd, self.drain)
        self.loop.call_soon(self.drain)  # messages that arrived before the reader was added

    def drain(self) -> None:
        """Hand every waiting message to ``on_message``."""
        zmq, sock = self.zmq, self.sock
        self.looking = False
        while not sock.closed and sock.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                break
            self.on_message(frames)

    def send(self, frames: List[bytes]) -> None:
        self.sock.send_multipart(frames, copy=True)
        if not self.looking:  # the send may have taken the descriptor's signal of a waiting message
            self.looking = True
            self.loop.call_soon(self.drain)

    def close(self) -> None:
        self.loop.remove_reader(self.fd)
        self.sock.close(0)
