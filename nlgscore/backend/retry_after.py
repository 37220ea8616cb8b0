"""How long an HTTP client waits before it sends a refused request again: the one rule of every
client here (``RemoteScorer``, slime's ``group_rm``).

A ``Retry-After`` header (RFC 9110, section 10.2.3) is delta-seconds (``1*DIGIT``) or an
HTTP-date; anything else (``nan``, ``-1``, ``1.5``, garbage) is treated as absent. The wait is
the exponential backoff or the server's ``Retry-After``, whichever is longer, and never more than
:data:`MAX_WAIT` seconds: a server (or a proxy) cannot stall a trainer's reward without bound.

>>> retry_after_seconds("7"), retry_after_seconds("nan"), retry_after_seconds("-3")
(7.0, None, None)
>>> retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
10.0
>>> wait_seconds(0, 0.25, "86400"), wait_seconds(3, 0.25, None)
(30.0, 2.0)
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Optional

MAX_WAIT = 30.0  # seconds: the longest wait between two attempts


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds a ``Retry-After`` value asks for (an HTTP-date in the past: 0), or None when absent or not RFC 9110's."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:  # RFC 9110's IMF-fixdate is always GMT
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def wait_seconds(attempt: int, backoff: float, retry_after: Optional[str]) -> float:
    """The wait before attempt ``attempt + 1``: ``backoff * 2**attempt`` or the server's
    ``Retry-After``, whichever is longer, at most :data:`MAX_WAIT`."""
    delay = backoff * (2 ** min(attempt, 64))
    asked = retry_after_seconds(retry_after)
    if asked is not None:
        delay = max(delay, asked)
    return min(delay, MAX_WAIT)
