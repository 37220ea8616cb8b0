"""A header-read timeout for uvicorn's HTTP protocols: a connection whose request line and
headers have not all arrived within ``seconds`` is closed.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) but not the time a
client takes to send its headers, so a client that opens a connection and sends a few header
bytes (or none) would hold it for ever (slowloris). nginx calls this bound
``client_header_timeout`` (60 s by default); the body has its own bound (``--body-timeout``).

>>> cls = with_header_timeout(2.5)
>>> cls.header_timeout, cls.__name__
(2.5, 'HeaderTimeoutProtocol')
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

__all__ = ["DEFAULT_HEADER_TIMEOUT", "with_header_timeout"]

DEFAULT_HEADER_TIMEOUT = 10.0  # seconds from a connection's first byte (or a kept-alive request's) to its last header


def _base() -> Any:
    """The protocol uvicorn's ``http="auto"`` picks: httptools where it installs, else h11."""
    try:
        import httptools  # noqa: F401
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


def with_header_timeout(seconds: float) -> Any:
    """uvicorn's HTTP protocol class, closing a connection whose headers take over ``seconds``
    (pass it as ``uvicorn.Config(http=...)``).

    A request's headers are complete once uvicorn has made its request-response cycle; the
    timer runs from the connection's start, and from the first byte of each later request on a
    kept-alive connection, to that moment."""
    base = _base()

    class HeaderTimeoutProtocol(base):  # type: ignore[valid-type,misc]
        header_timeout = seconds

        def connection_made(self, transport: Any) -> None:
            self._header_timer: Optional[asyncio.TimerHandle] = None
            self._header_cycle: Any = None
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._header_cycle = self.cycle
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._arm()  # the first bytes of a new request on a kept-alive connection
            super().data_received(data)
            if self.cycle is not self._header_cycle:  # its headers are complete: the request is the app's
                self._disarm()

        def _expired(self) -> None:
            self._header_timer = None
            if self.cycle is self._header_cycle and not self.transport.is_closing():
                self.transport.close()

        def connection_lost(self, exc: Optional[Exception]) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
