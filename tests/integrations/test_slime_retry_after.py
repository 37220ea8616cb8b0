"""slime's ``group_rm`` reads a server's ``Retry-After`` as RFC 9110 defines it (section 10.2.3),
against a real HTTP server on 127.0.0.1 that refuses the first request with 503.

delta-seconds and an HTTP-date are honoured; a value in neither form (``nan``, ``-5``, garbage)
counts as absent (the backoff applies); every wait is capped, so ``86400`` cannot stall a rollout.
The rule is :mod:`nlgscore.backend.retry_after`, shared with ``RemoteScorer``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import types
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nlgscore.backend.retry_after import MAX_WAIT, retry_after_seconds, wait_seconds

pytest.importorskip("httpx")


class Refusing(BaseHTTPRequestHandler):
    """503 with the server's ``retry_after`` for the first POST, then one reward per sample."""

    def do_POST(self) -> None:
        samples = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.seen.append(len(samples))
        first = len(self.server.seen) == 1
        body = json.dumps({"error": "loading"} if first else [0.5] * len(samples)).encode()
        self.send_response(503 if first else 200)
        if first:
            self.send_header("Retry-After", self.server.retry_after())
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize(
    "retry_after",
    [
        lambda: "1",
        lambda: formatdate(time.time() + 1, usegmt=True),  # an HTTP-date
        lambda: "nan",
        lambda: "-5",
        lambda: "soon",  # not RFC 9110: the backoff instead
    ],
)
def test_group_rm_retries_after_a_503_with_any_retry_after(retry_after):
    from nlgscore.integrations.slime import group_rm

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    server.seen, server.retry_after = [], retry_after
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        args = types.SimpleNamespace(rm_url=f"http://127.0.0.1:{server.server_address[1]}/v1/reward")
        samples = [types.SimpleNamespace(prompt="p", response="r", label="l")] * 3
        rewards = asyncio.run(asyncio.wait_for(group_rm(args, samples), timeout=MAX_WAIT))  # a guard against a stall
    finally:
        server.shutdown()
        server.server_close()
    assert rewards == [0.5, 0.5, 0.5] and server.seen == [3, 3]


def test_every_wait_is_capped_and_bad_values_are_absent():
    assert wait_seconds(0, 1.0, "86400") == MAX_WAIT
    assert wait_seconds(0, 1.0, formatdate(time.time() + 86400, usegmt=True)) == MAX_WAIT
    assert wait_seconds(40, 1.0, None) == MAX_WAIT
    for bad in (
        "nan",
        "NaN",
        "-1",
        "1.5",
        "inf",
        "",
        "  ",
        "1e3",
        "Mon, 99 Foo 2015",
        "\u0661",
    ):  # "\u0661" is an Arabic-Indic digit, not DIGIT
        assert retry_after_seconds(bad) is None, bad
        assert wait_seconds(1, 0.5, bad) == 1.0, bad
    assert retry_after_seconds(formatdate(0, usegmt=True)) == 0.0  # a date in the past: at once
