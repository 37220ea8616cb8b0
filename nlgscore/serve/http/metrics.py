"""The server's Prometheus metrics (``GET /metrics``), one registry per app so that two apps in
one process (tests) never share counters. Times are in seconds, sizes in pairs (predictions).

* ``nlgscore_queue_seconds``: from a request's arrival to the start of the batch that scored it;
  ``nlgscore_compute_seconds``: one merged compute (or one matrix), kept apart from the queue;
* ``nlgscore_batch_predictions`` / ``nlgscore_batch_calls``: pairs and requests per compute;
* ``nlgscore_pairs_per_second``: pairs / compute seconds of the last batch;
* ``nlgscore_predictions_total``, ``nlgscore_requests_total{endpoint,status}``,
  ``nlgscore_request_seconds{endpoint}``, ``nlgscore_queue_length``, ``nlgscore_active_requests``;
* ``nlgscore_dropped_total{reason}``: ``deadline`` (not scored within --timeout: a queued call is
  then never scored), ``disconnect`` (the client went away or stalled while sending its body),
  ``overload`` (answered 429).
* in the metric's own units, where the scorer counts them (``scorer.telemetry()``: BERTScore):
  ``nlgscore_batch_tokens`` (tokens encoded per compute) and ``nlgscore_batch_padding_ratio``
  (padding ÷ padded tokens per compute), ``nlgscore_tokens_total``, ``nlgscore_padding_tokens_total``,
  ``nlgscore_reference_cache_hits_total`` / ``_misses_total`` (its text cache);
* ``nlgscore_gc_frozen_objects``: objects kept out of garbage collections (``freeze_heap``), and
  prometheus_client's ``python_gc_collections_total{generation}``;
* ``nlgscore_scheduler_dropped_total{reason}``: calls the batcher dropped before scoring them
  (``deadline`` passed, or ``cancelled``: the client left or timed out while it was queued).

>>> counts = {"tokens": 0, "padded_tokens": 0}
>>> m = ServerMetrics(queue_length=lambda: 3, telemetry=lambda: counts)
>>> counts.update(tokens=30, padded_tokens=40)  # the scorer encoded 30 tokens in batches of 40
>>> m.observe_batch(predictions=5, calls=2, seconds=0.01)
>>> text = m.exposition().decode()
>>> "nlgscore_queue_length 3.0" in text and "nlgscore_compute_seconds_count 1.0" in text
True
>>> "nlgscore_batch_padding_ratio_sum 0.25" in text and "nlgscore_padding_tokens_total 10.0" in text
True
"""

from __future__ import annotations

import gc
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterator

from nlgscore.backend.extras import require
from nlgscore.core.scorer_like import ScorerLike

# predictions per merged compute: powers of two up to a large --max-batch
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
DROP_REASONS = ("deadline", "disconnect", "overload")
TOKEN_BUCKETS = tuple(2**k for k in range(4, 19))  # tokens per compute: 16 .. 262,144
RATIO_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)


class ServerMetrics:
    """Requests, pairs, batch sizes, queue and compute times, drops (see the module docstring)."""

    def __init__(
        self,
        queue_length: Callable[[], float],
        active: Callable[[], float] = lambda: 0,
        telemetry: Callable[[], Dict[str, int]] = dict,
        scheduler_drops: Callable[[], Dict[str, int]] = dict,
    ) -> None:
        prom = require("prometheus_client", "serve", "nlgscore serve's /metrics")
        self.registry = prom.CollectorRegistry()
        self._prom = prom
        r = self.registry
        self.requests = prom.Counter(
            "nlgscore_requests", "HTTP requests by endpoint and status", ["endpoint", "status"], registry=r
        )
        self.items = prom.Counter("nlgscore_predictions", "predictions scored", registry=r)
        self.latency = prom.Histogram(
            "nlgscore_request_seconds", "request latency by endpoint", ["endpoint"], buckets=SECONDS_BUCKETS, registry=r
        )
        self.queue_seconds = prom.Histogram(
            "nlgscore_queue_seconds",
            "seconds from a request's arrival to the start of its batch",
            buckets=SECONDS_BUCKETS,
            registry=r,
        )
        self.compute_seconds = prom.Histogram(
            "nlgscore_compute_seconds", "seconds of one merged compute (or matrix)", buckets=SECONDS_BUCKETS, registry=r
        )
        self.batch_predictions = prom.Histogram(
            "nlgscore_batch_predictions", "pairs per merged compute", buckets=BATCH_BUCKETS, registry=r
        )
        self.batch_calls = prom.Histogram(
            "nlgscore_batch_calls", "requests merged into one compute", buckets=BATCH_BUCKETS, registry=r
        )
        self.rate = prom.Gauge("nlgscore_pairs_per_second", "pairs per compute second, last batch", registry=r)
        self.dropped = prom.Counter("nlgscore_dropped", "requests not scored, by reason", ["reason"], registry=r)
        for reason in DROP_REASONS:
            self.dropped.labels(reason)
        self.queue = prom.Gauge("nlgscore_queue_length", "predictions waiting to be batched", registry=r)
        self.queue.set_function(queue_length)
        self.active = prom.Gauge("nlgscore_active_requests", "requests in the server", registry=r)
        self.active.set_function(active)
        self.batch_tokens = prom.Histogram(
            "nlgscore_batch_tokens", "tokens encoded per merged compute", buckets=TOKEN_BUCKETS, registry=r
        )
        self.padding = prom.Histogram(
            "nlgscore_batch_padding_ratio",
            "padding / padded tokens per merged compute",
            buckets=RATIO_BUCKETS,
            registry=r,
        )
        self.frozen = prom.Gauge(
            "nlgscore_gc_frozen_objects", "objects kept out of garbage collections (freeze_heap)", registry=r
        )
        self.frozen.set_function(gc.get_freeze_count)
        prom.GCCollector(registry=r)  # collections per generation: a full one holds the GIL for ~0.3 s unless frozen
        self.telemetry, self.scheduler_drops = telemetry, scheduler_drops
        self._seen: Dict[str, int] = dict(telemetry())  # the scorer's counters at the last batch
        r.register(_Counters(self))
        self._done: Deque[float] = deque()  # arrival times of calls the worker just finished

    def watch_queue(self, future: Any, arrived: float) -> None:
        """Time ``future``'s wait in the queue: its result is set by the batcher's worker thread
        just before that thread reports the batch (:meth:`observe_batch`), which knows its start."""
        future.add_done_callback(lambda f: None if f.cancelled() else self._done.append(arrived))

    def observe_batch(self, predictions: int, calls: int, seconds: float) -> None:
        """The micro-batcher's ``on_batch`` callback (on its worker thread)."""
        started = time.perf_counter() - seconds
        while self._done:
            self.queue_seconds.observe(max(0.0, started - self._done.popleft()))
        self.items.inc(predictions)
        self.batch_predictions.observe(predictions)
        self.batch_calls.observe(calls)
        self.compute_seconds.observe(seconds)
        if seconds > 0:
            self.rate.set(predictions / seconds)
        counts = dict(self.telemetry())
        tokens, padded = (counts.get(k, 0) - self._seen.get(k, 0) for k in ("tokens", "padded_tokens"))
        self._seen = counts
        if padded > 0:  # this compute encoded texts (a fully cached one did not)
            self.batch_tokens.observe(tokens)
            self.padding.observe((padded - tokens) / padded)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)
        reason = {504: "deadline", 408: "disconnect", 499: "disconnect", 429: "overload"}.get(status)
        if reason is not None:
            self.dropped.labels(reason).inc()

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return self._prom.generate_latest(self.registry)

    @property
    def content_type(self) -> str:
        return self._prom.CONTENT_TYPE_LATEST


def scorer_counters(scorer: ScorerLike) -> Dict[str, int]:
    """``scorer.telemetry()`` where the metric counts its work (BERTScore), else nothing.

    >>> scorer_counters(None)
    {}
    """
    telemetry = getattr(scorer, "telemetry", None)
    return dict(telemetry()) if callable(telemetry) else {}


class _Counters:
    """A Prometheus collector of counters kept elsewhere, read at each scrape: the scorer's
    ``telemetry()`` and the batcher's ``dropped``."""

    NAMES = {
        "tokens": ("tokens", "tokens encoded"),
        "cache_hits": ("reference_cache_hits", "text cache lookups that found the text"),
        "cache_misses": ("reference_cache_misses", "text cache lookups that did not"),
        "front_tokenized": ("worker_tokenized_texts", "texts whose token ids an HTTP worker computed"),
    }

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        counts = dict(self.metrics.telemetry())
        for key, (name, help_text) in self.NAMES.items():
            if key in counts:
                yield CounterMetricFamily(f"nlgscore_{name}", help_text, value=counts[key])
        if "padded_tokens" in counts:
            yield CounterMetricFamily(
                "nlgscore_padding_tokens",
                "padding tokens encoded",
                value=counts["padded_tokens"] - counts.get("tokens", 0),
            )
        dropped = CounterMetricFamily(
            "nlgscore_scheduler_dropped", "calls dropped before scoring, by reason", labels=["reason"]
        )
        for reason, count in sorted(self.metrics.scheduler_drops().items()):
            dropped.add_metric([reason], count)
        yield dropped
