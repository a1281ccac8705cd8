"""The API server's families in ``/metrics``, on the gateway's Prometheus registry.

The server reads some of these numbers itself (the stream cap and
``/health`` read ``active_streams``; tests read ``errors``), and it bumps
``deltas`` once per SSE write, so they stay plain Python numbers (one
event loop: no lock needed) and :meth:`Metrics.collect` turns them into
metric families at scrape time — a ``prometheus_client`` custom collector.
Time to first token is a native ``prometheus_client`` histogram.

Families (unchanged from the hand-written text this replaces, except that
``prometheus_client`` writes label names in sorted order and values as
floats, and adds the ``_created`` sample of the histogram):
``hermes_api_requests_total{route,status}``, ``hermes_api_active_streams``,
``hermes_api_deltas_total``, ``hermes_api_errors_total{kind}``,
``hermes_api_time_to_first_token_seconds``. (Platforms count their own
events on the gateway's families, not here: see
:mod:`hermes_gateway._core.metrics`.)
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest

TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The API server's numbers; registered on ``registry`` (the gateway's), or on a registry of its own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.requests: Counter[tuple[str, int]] = Counter()  # (route, status)
        self.errors: Counter[str] = Counter()                 # kind
        self.active_streams = 0
        self.deltas = 0
        self.ttft = Histogram("hermes_api_time_to_first_token_seconds", "From request received to first text sent.",
                              registry=self.registry, buckets=TTFT_BUCKETS)
        self.registry.register(self)

    def request(self, route: str, status: int) -> None:
        self.requests[(route, status)] += 1

    def error(self, kind: str) -> None:
        self.errors[kind] += 1

    def render(self) -> str:
        """The whole registry in Prometheus' text format (with the gateway's families when it is the gateway's)."""
        return generate_latest(self.registry).decode("utf-8")

    # -- the custom collector ----------------------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily("hermes_api_requests", "API requests by route and HTTP status.",
                                       labels=["route", "status"])
        for (route, status), n in sorted(self.requests.items()):
            requests.add_metric([route, str(status)], n)
        yield requests
        yield GaugeMetricFamily("hermes_api_active_streams", "SSE streams open right now.", value=self.active_streams)
        yield CounterMetricFamily("hermes_api_deltas", "Text deltas sent to clients as SSE events.", value=self.deltas)
        errors = CounterMetricFamily("hermes_api_errors", "Failed turns and refused requests by kind.",
                                     labels=["kind"])
        for kind, n in sorted(self.errors.items()):
            errors.add_metric([kind], n)
        yield errors

    def describe(self) -> Iterator[Metric]:
        """The names this collector yields (the registry refuses a second collector with the same ones)."""
        return self.collect()
