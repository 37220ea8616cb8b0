"""Running a serving app on uvicorn: bind, serve, and stop cleanly.

SIGTERM (or Ctrl-C) makes uvicorn stop accepting connections, finish the requests in flight
for at most ``drain_timeout`` seconds (then the requests still open, a client stalled in the
middle of its body included, are cut), then run the app's shutdown (the micro-batcher scores
what is still queued); :func:`run_server` then returns 0. uvicorn re-raises the signal it caught once it is done; the handler installed
here for that moment does nothing, so a SIGTERM ends the process with status 0, not 143.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
from typing import Any, Callable, Optional

from nlgscore.errors import ArgumentError
from nlgscore.backend.extras import require

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DRAIN_TIMEOUT = 30.0  # seconds SIGTERM waits for the requests in flight (a scheduler's grace period is often 30 s)


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
        raise ArgumentError(f"--host {host} accepts connections from other machines: give --api-key-file so that they need a bearer token")


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


def run_server(app_factory: Callable[[Callable[[Optional[BaseException]], None]], Any], host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
               log_level: str = "warning", announce: Optional[Callable[[str], None]] = None, drain_timeout: float = DEFAULT_DRAIN_TIMEOUT) -> int:
    """Serve ``app_factory(on_loaded)`` on ``host:port`` until SIGTERM/SIGINT and return 0 (within
    ``drain_timeout`` seconds of the signal plus the app's shutdown); the
    scorer's load error is raised if it failed (the server stops then). ``announce(url)`` is told
    the address once the socket listens (the real port when ``port`` is 0)."""
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

    config = uvicorn.Config(app_factory(on_loaded), host=host, port=port, log_level=log_level, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=drain_timeout)
    server = uvicorn.Server(config)
    previous = signal.signal(signal.SIGTERM, _after_shutdown)
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    if failed:
        raise failed[0]
    return 0


def _after_shutdown(signum: int, frame: Any) -> None:
    """Receives the SIGTERM that uvicorn re-raises after its graceful shutdown: the process then
    returns normally (status 0). uvicorn's own handler is the one installed while it serves."""
