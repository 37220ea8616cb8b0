"""Running a serving app on uvicorn: bind, serve, and stop cleanly.

SIGTERM (or Ctrl-C) starts the app's drain (``app.state.nlgscore.drain``): new scoring requests
get 503 while the requests in flight are answered and the ROLL tasks already accepted can still be
polled, for at most ``drain_timeout`` seconds; what still waits then is answered 503 and dropped
unscored. uvicorn then stops accepting connections, cuts what is still open (a client stalled in
the middle of its body), and runs the app's shutdown; :func:`run_server` then returns 0.
Connections whose headers take longer than ``header_timeout`` seconds are closed
(:mod:`nlgscore.serve.http.header_timeout`). uvicorn re-raises the signal it caught once it is done; the handler installed
here for that moment does nothing, so a SIGTERM ends the process with status 0, not 143.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import socket
import sys
from typing import Any, Callable, List, Optional

from nlgscore.backend.extras import require
from nlgscore.errors import ArgumentError
from nlgscore.serve.http.header_timeout import DEFAULT_HEADER_TIMEOUT, with_header_timeout

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DRAIN_TIMEOUT = (
    30.0  # seconds SIGTERM waits for the requests in flight (a scheduler's grace period is often 30 s)
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, api_key: Optional[str]) -> None:
    """A server reachable from other machines must require a token (``--api-key-file``)."""
    if not is_loopback(host) and api_key is None:
        raise ArgumentError(
            f"--host {host} accepts connections from other machines: give --api-key-file so that they need a bearer token"
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), bound before any model loads, so
    that a port in use is one clear error naming the flags.

    >>> sock = bind("127.0.0.1", 0); sock.getsockname()[1] > 0
    True
    >>> bind("127.0.0.1", sock.getsockname()[1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: cannot listen on 127.0.0.1:... (--host/--port): ...
    >>> sock.close()
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ArgumentError(f"--port must be 0-65535, got {port!r}")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as err:
        raise ArgumentError(f"cannot listen on {host}:{port} (--host/--port): {err.strerror or err}") from None


def bind_group(host: str, port: int, count: int) -> List[socket.socket]:
    """``count`` listening sockets on one ``host:port`` for ``count`` worker processes, with
    ``SO_REUSEPORT``: the kernel spreads new connections over them by a hash of each connection,
    so every worker gets its share (one socket shared by all lets whichever worker wakes first
    take a burst of connections: 149 against 539 CPU ticks between two workers under 64
    keep-alive connections). Where the system has no ``SO_REUSEPORT``, one shared socket. The
    port is first claimed without the option, so a port another server holds (even one using
    ``SO_REUSEPORT`` itself) is the clear error of :func:`bind`, never a silent share.

    >>> socks = bind_group("127.0.0.1", 0, 3)
    >>> len(socks), len({s.getsockname()[1] for s in socks})
    (3, 1)
    >>> bind("127.0.0.1", socks[0].getsockname()[1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgscore.errors.ArgumentError: cannot listen on 127.0.0.1:... (--host/--port): ...
    >>> for s in socks: s.close()
    """
    if count == 1 or not hasattr(socket, "SO_REUSEPORT"):
        return [bind(host, port)]
    claim = bind(host, port)  # no one listens there (errors name the flags); the port, if 0 was asked
    port = claim.getsockname()[1]
    family = claim.family
    claim.close()
    group: List[socket.socket] = []
    try:
        for _ in range(count):
            group.append(socket.create_server((host, port), family=family, reuse_port=True))
    except OSError as err:
        for sock in group:
            sock.close()
        raise ArgumentError(f"cannot listen on {host}:{port} (--host/--port): {err.strerror or err}") from None
    return group


def run_server(
    app_factory: Callable[[Callable[[Optional[BaseException]], None]], Any],
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    log_level: str = "warning",
    announce: Optional[Callable[[str], None]] = None,
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
) -> int:
    """Serve ``app_factory(on_loaded)`` on ``host:port`` until SIGTERM or SIGINT.

    The first signal drains: scoring requests are refused (503) while those in flight finish,
    for at most ``drain_timeout`` seconds, then the app shuts down.

    Args:
        app_factory: builds the ASGI app, given the callback the app calls once its scorer has
            loaded (with None) or failed to (with the error); `create_app`'s ``on_loaded``.
        host: the address listened on (the loopback one by default: only this machine).
        port: the port listened on (0: one the system picks; ``announce`` is told which).
        log_level: uvicorn's log level.
        announce: told the server's URL (``http://HOST:PORT``) once the socket listens.
        drain_timeout: seconds the first signal waits for the requests in flight.
        header_timeout: seconds a connection may take from its first byte to its last header
            before it is closed (slow clients hold no connection open).

    Returns:
        0, once the server has stopped.

    Raises:
        ArgumentError: ``host:port`` cannot be listened on (the message names ``--host``/``--port``).
        Exception: what loading the scorer raised, if it failed (the server stops then).
    """
    uvicorn = require("uvicorn", "serve", "nlgscore serve")
    sock = bind(host, port)
    if announce is not None:
        bound = sock.getsockname()
        announce(f"http://{f'[{bound[0]}]' if ':' in bound[0] else bound[0]}:{bound[1]}")
    failed = []

    def on_loaded(error: Optional[BaseException]) -> None:
        if error is not None:
            failed.append(error)
            server.should_exit = True

    app = app_factory(on_loaded)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=CUT_GRACE_S,
        http=with_header_timeout(header_timeout),
    )
    server = draining_server(
        uvicorn.Server, config, getattr(getattr(app, "state", None), "nlgscore", None), drain_timeout
    )
    previous = signal.signal(signal.SIGTERM, _after_shutdown)
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    if failed:
        raise failed[0]
    gate = getattr(getattr(app, "state", None), "nlgscore", None)
    if gate is not None and gate.backend.running():
        # A run the drain cut is still on the model: the process ends now, not when it is done
        # (the interpreter's exit, with that thread inside torch, would abort).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


CUT_GRACE_S = (
    0.5  # seconds uvicorn gives the connections still open after the drain (the 503 answers) before it cuts them
)


def draining_server(base: Any, config: Any, service: Any, drain_timeout: float) -> Any:
    """A ``uvicorn.Server`` (``base``) whose first SIGTERM/SIGINT runs ``service.drain(drain_timeout)``
    while it still serves (polls during the drain), and only then stops; a second signal stops it at once."""

    loop: Any = None  # the server's event loop, once it serves

    class DrainingServer(base):
        draining: Any = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.draining is not None and sig == signal.SIGTERM:
                return None  # already draining (a parent's SIGTERM after the group's Ctrl-C): a second SIGINT stops at once
            if service is None or loop is None or self.draining is not None or self.should_exit:
                return super().handle_exit(sig, frame)
            self.draining = asyncio.run_coroutine_threadsafe(self._drain(), loop)

        async def _drain(self) -> None:
            try:
                await service.drain(drain_timeout)  # the requests in flight get the whole drain
            finally:
                self.should_exit = True

        async def serve(self, sockets: Any = None) -> None:
            nonlocal loop
            loop = asyncio.get_running_loop()
            await super().serve(sockets=sockets)

    return DrainingServer(config)


def _after_shutdown(signum: int, frame: Any) -> None:
    """Receives the SIGTERM that uvicorn re-raises after its graceful shutdown: the process then
    returns normally (status 0). uvicorn's own handler is the one installed while it serves."""
