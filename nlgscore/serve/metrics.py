"""The server's Prometheus metrics (``GET /metrics``), one registry per app so that two apps in
one process (tests) never share counters.

>>> m = ServerMetrics(queue_length=lambda: 3)
>>> m.observe_batch(predictions=5, calls=2, seconds=0.01)
>>> text = m.exposition().decode()
>>> "nlgscore_queue_length 3.0" in text and "nlgscore_batch_predictions_count 1.0" in text
True
"""

from __future__ import annotations

from typing import Callable

from nlgscore.core.extras import require

# predictions per merged compute: powers of two up to a large --max-batch
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServerMetrics:
    """Requests (by endpoint and status), predictions scored, batch sizes, queue length, latency."""

    def __init__(self, queue_length: Callable[[], float]) -> None:
        prom = require("prometheus_client", "serve", "nlgscore serve's /metrics")
        self.registry = prom.CollectorRegistry()
        self._prom = prom
        r = self.registry
        self.requests = prom.Counter("nlgscore_requests", "HTTP requests by endpoint and status", ["endpoint", "status"], registry=r)
        self.items = prom.Counter("nlgscore_predictions", "predictions scored", registry=r)
        self.latency = prom.Histogram("nlgscore_request_seconds", "request latency by endpoint", ["endpoint"], buckets=SECONDS_BUCKETS, registry=r)
        self.batch_predictions = prom.Histogram("nlgscore_batch_predictions", "predictions per merged compute", buckets=BATCH_BUCKETS, registry=r)
        self.batch_calls = prom.Histogram("nlgscore_batch_calls", "requests merged into one compute", buckets=BATCH_BUCKETS, registry=r)
        self.batch_seconds = prom.Histogram("nlgscore_batch_seconds", "time of one merged compute", buckets=SECONDS_BUCKETS, registry=r)
        self.queue = prom.Gauge("nlgscore_queue_length", "predictions waiting to be batched", registry=r)
        self.queue.set_function(queue_length)

    def observe_batch(self, predictions: int, calls: int, seconds: float) -> None:
        """The micro-batcher's ``on_batch`` callback."""
        self.items.inc(predictions)
        self.batch_predictions.observe(predictions)
        self.batch_calls.observe(calls)
        self.batch_seconds.observe(seconds)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return self._prom.generate_latest(self.registry)

    @property
    def content_type(self) -> str:
        return self._prom.CONTENT_TYPE_LATEST
