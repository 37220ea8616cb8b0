"""The HTTP connections of one :class:`~nlgscore.remote.client.RemoteScorer`: one pooled
``httpx.Client`` for blocking calls and one async client per event loop, reused by every request
(a client per request pays a new connection and pool set-up each time).

The async client is an ``aiohttp.ClientSession`` where aiohttp is installed (the ``serve``
extra): under hundreds of concurrent requests httpx's async pool costs several times as much CPU
per request (BENCHMARKS.md, "The pooled client"); else an ``httpx.AsyncClient``. Both answer
:meth:`request` with a response read in full (``status_code``, ``headers``, ``json()``, ``text``)
and raise httpx's ``TimeoutException`` / ``TransportError``, so the scorer has one error path.

An async client belongs to the loop that made it (its connections are that loop's transports),
so each loop gets its own. It is closed:

* with the loop, when ``asyncio.run`` (or ``asyncio.Runner``) shuts the loop's async generators
  down: a small generator started in the loop holds the client and closes it in its ``finally``;
* with the scorer: :meth:`ClientPool.close` / :meth:`ClientPool.aclose` (the scorer's ``close``,
  ``aclose`` and context managers), and at interpreter exit (a ``weakref.finalize``), in the
  client's own loop when that loop still exists.

>>> import asyncio
>>> pool = ClientPool("http://127.0.0.1:9", 1.0, {})
>>> async def same():
...     return (await pool.async_client()) is (await pool.async_client())
>>> asyncio.run(same())
True
>>> pool.close()
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

from nlgscore.backend.extras import require


async def _held_until_loop_ends(client: Any) -> AsyncIterator[None]:
    """Suspended at its ``yield`` for the loop's life; the loop's async-generator shutdown closes the client."""
    try:
        yield
    finally:
        await client.aclose()


class ClientPool:
    """One blocking client and one async client per event loop, for one server (see the module docstring)."""

    def __init__(self, url: str, timeout: float, headers: Dict[str, str]) -> None:
        self.url, self.timeout, self.headers = url, timeout, headers
        self._lock = threading.Lock()
        self._sync: Any = None
        self._async: Dict[int, Tuple[Any, Any, Any]] = {}  # id(loop) -> (weakref to the loop, AsyncClient, its holder)

    def sync_client(self) -> Any:
        """The pooled ``httpx.Client``."""
        with self._lock:
            if self._sync is None:
                httpx = require("httpx", "serve", "a remote scorer")
                self._sync = httpx.Client(base_url=self.url, timeout=self.timeout, headers=self.headers)
            return self._sync

    async def async_client(self) -> Any:
        """The running loop's pooled ``httpx.AsyncClient`` (made on first use in that loop)."""
        loop = asyncio.get_running_loop()
        entry = self._async.get(id(loop))
        if entry is not None and entry[0]() is loop and not entry[1].is_closed:
            return entry[1]
        client = _async_client(self.url, self.timeout, self.headers)
        holder = _held_until_loop_ends(client)
        with self._lock:
            self._prune()
            self._async[id(loop)] = (weakref.ref(loop), client, holder)
        await holder.__anext__()  # runs to its yield at once; the loop now tracks it
        return client

    def _prune(self) -> None:
        """Forget the clients of loops that are gone or closed (their holders closed them, or nothing can)."""
        for key in [k for k, (ref, _, _) in self._async.items() if ref() is None or ref().is_closed()]:
            del self._async[key]

    def _take(self) -> Tuple[Any, List[Tuple[Any, Any, Any]]]:
        with self._lock:
            sync, self._sync = self._sync, None
            entries = [(ref(), client, holder) for ref, client, holder in self._async.values()]
            self._async.clear()
        return sync, [
            (loop, client, holder) for loop, client, holder in entries if loop is not None and not loop.is_closed()
        ]

    def _keep(self, loop: Any, client: Any, holder: Any) -> None:
        """Hold a client that cannot be closed from here (its loop is idle and another one runs):
        its loop's shutdown closes it."""
        with self._lock:
            self._async.setdefault(id(loop), (weakref.ref(loop), client, holder))

    def close(self) -> None:
        """Close every client: each async one in its own loop (scheduled there if that loop is running)."""
        sync, entries = self._take()
        if sync is not None:
            sync.close()
        current = _running_loop()
        for loop, client, holder in entries:
            if current is not None and loop is current:
                current.create_task(_finish(holder))
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(_finish(holder), loop)
            elif current is None:
                loop.run_until_complete(_finish(holder))
            else:
                self._keep(loop, client, holder)

    async def aclose(self) -> None:
        """:meth:`close`, awaiting the running loop's client (and another running loop's)."""
        sync, entries = self._take()
        if sync is not None:
            sync.close()
        current = asyncio.get_running_loop()
        for loop, client, holder in entries:
            if loop is None:  # the loop was collected: its transports went with it
                continue
            if loop is current:
                await _finish(holder)
            elif loop.is_running():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_finish(holder), loop))
            else:
                self._keep(loop, client, holder)


async def _finish(holder: Any) -> None:
    """End a holder generator: its ``finally`` closes the client (a closed client closes again harmlessly)."""
    await holder.aclose()


def _running_loop() -> Optional[Any]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _async_client(url: str, timeout: float, headers: Dict[str, str]) -> Any:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        httpx = require("httpx", "serve", "a remote scorer")
        return httpx.AsyncClient(base_url=url, timeout=timeout, headers=headers)
    return AiohttpClient(url, timeout, headers)


class Answer:
    """A response read in full: what the scorer reads of an httpx response."""

    def __init__(self, status_code: int, headers: Any, body: bytes) -> None:
        self.status_code, self.headers, self.content = status_code, headers, body

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


class AiohttpClient:
    """An ``aiohttp.ClientSession`` with httpx's surface for the calls the scorer makes."""

    def __init__(self, url: str, timeout: float, headers: Dict[str, str]) -> None:
        import aiohttp

        self.url = url
        # one timer per request (a per-read timer costs measurable CPU under many concurrent requests)
        self.session = aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=timeout or None))

    @property
    def is_closed(self) -> bool:
        return self.session.closed

    async def request(self, method: str, path: str, json: Any = None) -> Answer:
        import aiohttp
        import httpx

        try:
            async with self.session.request(method, self.url + path, json=json) as response:
                return Answer(response.status, response.headers, await response.read())
        except asyncio.TimeoutError as err:
            raise httpx.ReadTimeout(f"no answer within the timeout: {err}") from err
        except aiohttp.ClientError as err:
            raise httpx.ConnectError(f"{type(err).__name__}: {err}") from err

    async def aclose(self) -> None:
        await self.session.close()
