"""slime's reward, scored by ``nlgscore serve``.

* One sample at a time, with slime's own client: ``--rm-type remote_rm --rm-url
  http://HOST:PORT/v1/reward`` (slime posts ``{"prompt", "response", "label"}`` and reads a bare
  JSON number: :mod:`nlgscore.serve.http.endpoints.slime`). The server merges the concurrent samples.
* A group in one request: ``--group-rm --custom-rm-path nlgscore.integrations.slime.group_rm
  --rm-url http://HOST:PORT/v1/reward``: slime then calls ``group_rm(args, samples)``
  (``slime/rollout/rm_hub/__init__.py``, ``batched_async_rm``), which posts the samples as one
  JSON array and returns their rewards in order.

Retries follow slime's ``remote_rm``: up to 10 attempts, backing off (and honouring the server's
``Retry-After`` on 429/503 in both RFC 9110 forms, each wait at most 30 s, the rule of
:mod:`nlgscore.backend.retry_after`); a 4xx other than 429 is a bad sample and raises at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Sequence

from nlgscore.backend.retry_after import wait_seconds
from nlgscore.errors import ArgumentError

MAX_RETRIES = 10  # slime's remote_rm
BACKOFF = 1.0  # seconds before the second attempt, doubled each time
RETRYABLE = (429, 502, 503, 504)


def payload(sample: Any) -> dict:
    """slime's request body for one ``Sample``.

    Args:
        sample: a slime ``Sample`` (its ``prompt``, ``response`` and ``label`` are read).

    Returns:
        ``{"prompt", "response", "label"}``, as slime's ``remote_rm`` posts it.

    Example:
        >>> from types import SimpleNamespace
        >>> payload(SimpleNamespace(prompt="Weather?", response="It is cold.", label="It is cold."))
        {'prompt': 'Weather?', 'response': 'It is cold.', 'label': 'It is cold.'}
    """
    return {"prompt": sample.prompt, "response": sample.response, "label": sample.label}


async def group_rm(args: Any, samples: Sequence[Any], **kwargs: Any) -> List[float]:
    """The rewards of a group of slime samples, in order, from one request to ``args.rm_url``.

    Retries follow slime's ``remote_rm`` (see the module docstring).

    Args:
        args: slime's arguments; ``args.rm_url`` is the server's ``/v1/reward`` address.
        samples: the group's ``Sample`` objects.
        **kwargs: what else slime passes (not read).

    Returns:
        One reward per sample (none for an empty group, with no request).

    Raises:
        ArgumentError: ``args.rm_url`` is not an ``http://`` or ``https://`` address.
        RuntimeError: the server answered another status than 200 after the retries, or not one
            number per sample.
        httpx.TransportError: the server could not be reached in 10 attempts.
    """
    import httpx

    url = getattr(args, "rm_url", None)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ArgumentError(f"--rm-url must be the server's /v1/reward address, got {url!r}")
    if not samples:
        return []
    body = [payload(sample) for sample in samples]
    async with httpx.AsyncClient(timeout=120) as client:
        for attempt in range(MAX_RETRIES):
            try:
                response = await client.post(url, json=body)
            except httpx.TransportError:
                if attempt + 1 >= MAX_RETRIES:
                    raise
                await asyncio.sleep(wait_seconds(attempt, BACKOFF, None))
                continue
            if response.status_code in RETRYABLE and attempt + 1 < MAX_RETRIES:
                await asyncio.sleep(wait_seconds(attempt, BACKOFF, response.headers.get("retry-after")))
                continue
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:300]}")
            rewards = response.json()
            if not isinstance(rewards, list) or len(rewards) != len(samples):
                raise RuntimeError(f"{url} answered {type(rewards).__name__} for a group of {len(samples)} samples")
            return [float(r) for r in rewards]
    raise AssertionError("unreachable")
