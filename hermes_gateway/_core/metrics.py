"""``/metrics``: what one gateway process (one replica) tells Prometheus, on its own registry.

One :class:`GatewayMetrics` per :class:`~hermes_gateway._core.gateway.Gateway`,
each with its own ``CollectorRegistry`` (never the process-wide default:
tests run many gateways in one process, and two gateways must not count
into each other). Prometheus tells replicas apart by the ``instance`` label
of each scrape target, so no metric carries a replica name.

Delivery, the same on every platform (labels: ``platform``; ``method`` is
the hook: ``on_stream_start`` for typing, ``on_delta`` for a preview,
``on_stream_end`` for a message's final text; ``outcome`` is ``ok``,
``rate_limited``, ``failed`` or ``maybe_delivered``, see
:mod:`hermes_gateway._core.delivery.observer`):

* ``hermes_delivery_calls_total{platform,method,outcome}``
* ``hermes_delivery_rate_limited_total{platform,scope}`` — 429s, ``scope`` ``chat`` or ``bot``
* ``hermes_delivery_rate_limit_wait_seconds_total{platform,scope}`` — the waits those 429s asked for
* ``hermes_delivery_first_text_seconds{platform}`` — histogram: reply started → first text on screen
* ``hermes_delivery_final_latency_seconds{platform}`` — histogram: model finished → final text on screen
* ``hermes_delivery_replies_in_flight{platform}`` — gauge

Inbound and coordination:

* ``hermes_inbound_dedupe_hits_total`` — redelivered updates answered no second time (the inbound
  runtime's count, plus the shared dedupe's with ``coordination.url``)
* ``hermes_coordination_lease_takeovers_total`` — chat leases taken over from a replica that stopped
  renewing them: the coordination backend's ``lease_takeovers`` count, read at each scrape, plus any
  ``gateway.metrics.lease_takeovers.inc()``

Platforms:

* ``hermes_platform_events_total{event,platform}`` — what a platform plugin counts of its own
  (``PlatformContext.count``: WhatsApp's delivery statuses, refused signatures)
* ``hermes_platform_connected{platform}`` — gauge, 1 while the platform's client reports it reachable
  (``PlatformContext.report_connected``), 0 once it reported a disconnection or stopped; a platform whose
  client reports nothing is left out (the gateway cannot tell), read from the dashboard's record at each scrape

The API server adds its own families (``hermes_api_*``) to the same registry
when it is enabled (:meth:`GatewayMetrics.attach`).
``prometheus_client`` is imported when a gateway first needs its metrics,
not when the CLI starts.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterator, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from .errors import DeliveryError, RateLimited

if TYPE_CHECKING:
    from aiohttp import web

    from .delivery.session import DeliveryReport
    from .platform_status import PlatformStatuses

T = TypeVar("T")

#: Reply started → first visible text: model latency, ``min_tokens`` and pacing together.
FIRST_TEXT_BUCKETS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 20.0, 30.0, 60.0)
#: Model finished → final text on screen: the last edit's wait for the budget, plus the call.
FINAL_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0)

OUTCOMES = ("ok", "rate_limited", "failed", "maybe_delivered")


class GatewayMetrics:
    """The metric families of one gateway, and the observer its delivery core reports to."""

    def __init__(self, *, dedupe_hits: Callable[[], float] = lambda: 0,
                 lease_takeovers: Callable[[], float] = lambda: 0, status: "PlatformStatuses | None" = None) -> None:
        """``dedupe_hits``/``lease_takeovers``: counts kept elsewhere (the inbound runtime, the coordination
        backend), read at each scrape and added to what was counted here with ``.inc()``. ``status``: the
        gateway's per-platform record (the dashboard's), told of each 429 and failed call."""
        self.status = status
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.calls = Counter("hermes_delivery_calls", "Platform calls made by the delivery core, by hook and outcome.",
                             ["platform", "method", "outcome"], registry=r)
        self.rate_limited = Counter("hermes_delivery_rate_limited", "429s (flood errors) platforms answered, "
                                    "by scope: one chat, or the whole bot.", ["platform", "scope"], registry=r)
        self.rate_limit_wait = Counter("hermes_delivery_rate_limit_wait_seconds", "Seconds the 429s asked the "
                                       "gateway to wait before calling again (their retry_after, summed).",
                                       ["platform", "scope"], registry=r)
        self.first_text = Histogram("hermes_delivery_first_text_seconds", "From a reply's start to the first "
                                    "call that put its text on screen.", ["platform"], registry=r,
                                    buckets=FIRST_TEXT_BUCKETS)
        self.final_latency = Histogram("hermes_delivery_final_latency_seconds", "From the end of the model's "
                                       "reply to its final text on screen (replies delivered whole).",
                                       ["platform"], registry=r, buckets=FINAL_LATENCY_BUCKETS)
        self.in_flight = Gauge("hermes_delivery_replies_in_flight", "Replies being delivered right now.",
                               ["platform"], registry=r)
        self.platform_events = Counter("hermes_platform_events", "Events platform plugins received (webhook "
                                       "statuses, refusals).", ["event", "platform"], registry=r)
        self.lease_takeovers = SourcedCounter(
            "hermes_coordination_lease_takeovers", "Chat leases this replica took over after their holder stopped "
            "renewing them (a replica died mid-reply).", lease_takeovers)
        self.dedupe_hits = SourcedCounter(
            "hermes_inbound_dedupe_hits", "Updates received again (a webhook retried, an event replayed) and "
            "therefore not answered again.", dedupe_hits)
        r.register(self.lease_takeovers)
        r.register(self.dedupe_hits)
        if status is not None:
            r.register(PlatformConnected(status))
        self._attached: dict[str, Any] = {}
        self._call_counts: dict[tuple[str, str, str], Any] = {}  # labelled children, looked up once (1.8 -> 0.4 us)
        self._platforms: set[str] = set()

    def platform_event(self, platform: str, event: str, n: int = 1) -> None:
        """A platform plugin counted ``n`` of its own events (``PlatformContext.count``: WhatsApp's
        ``status_delivered``, a refused signature)."""
        self.platform_events.labels(event=event, platform=platform).inc(n)

    def count_call(self, platform: str, method: str, outcome: str) -> None:
        """One platform call ended with ``outcome``."""
        key = (platform, method, outcome)
        child = self._call_counts.get(key)
        if child is None:
            child = self._call_counts[key] = self.calls.labels(platform, method, outcome)
        child.inc()

    def attach(self, name: str, make: Callable[[CollectorRegistry], T]) -> T:
        """Families another part of the gateway keeps on this registry (the API server's): ``make(registry)``,
        called once per gateway, so a restarted gateway mounting its routes again registers nothing twice."""
        if name not in self._attached:
            self._attached[name] = make(self.registry)
        return self._attached[name]  # type: ignore[no-any-return]

    def reply(self, platform: str) -> "ReplyMetrics":
        """The observer of one reply (``Delivery`` asks for one per session)."""
        if platform not in self._platforms:
            self._zero(platform)
        return ReplyMetrics(self, platform)

    def _zero(self, platform: str) -> None:
        """Create a platform's series at 0 on its first reply, so the first 429 shows in ``rate()`` and
        ``increase()`` (a series that appears at 1 is not seen to increase)."""
        self._platforms.add(platform)
        for method in ("on_stream_start", "on_delta", "on_stream_end"):
            for outcome in OUTCOMES:
                self._call_counts[(platform, method, outcome)] = self.calls.labels(platform, method, outcome)
        for scope in ("chat", "bot"):
            self.rate_limited.labels(platform, scope)
            self.rate_limit_wait.labels(platform, scope)
        self.first_text.labels(platform)
        self.final_latency.labels(platform)
        self.in_flight.labels(platform)

    def render(self, accept: str | None = None) -> tuple[bytes, str]:
        """The exposition (Prometheus text, or OpenMetrics if ``accept`` asks for it) and its content type."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


class ReplyMetrics:
    """Counts one reply's calls and times its first and final text (a ``ReplyObserver``)."""

    __slots__ = ("_m", "_platform", "_started_at", "_first_pending", "_finishing_at", "_in_flight")

    def __init__(self, metrics: GatewayMetrics, platform: str) -> None:
        self._m = metrics
        self._platform = platform
        self._started_at = 0.0
        self._first_pending = False
        self._finishing_at: float | None = None
        self._in_flight = False

    def started(self) -> None:
        self._started_at = asyncio.get_running_loop().time()
        self._first_pending = True
        self._in_flight = True
        self._m.in_flight.labels(self._platform).inc()

    async def call(self, method: str, text: str, call: Awaitable[Any]) -> Any:
        m, platform = self._m, self._platform
        try:
            result = await call
        except RateLimited as exc:
            m.count_call(platform, method, "rate_limited")
            if m.status is not None:
                m.status.rate_limited(platform)
            m.rate_limited.labels(platform, exc.scope).inc()
            m.rate_limit_wait.labels(platform, exc.scope).inc(max(exc.retry_after, 0.0))
            raise
        except DeliveryError as exc:
            m.count_call(platform, method, "maybe_delivered" if exc.maybe_delivered else "failed")
            if m.status is not None:
                m.status.failed(platform, f"{method}: {str(exc) or type(exc).__name__}")
            raise
        except asyncio.CancelledError:  # stopped while the request was out: it may have landed
            m.count_call(platform, method, "maybe_delivered")
            raise
        except Exception as exc:
            m.count_call(platform, method, "failed")
            if m.status is not None:
                m.status.failed(platform, f"{method}: {type(exc).__name__}: {exc}")
            raise
        m.count_call(platform, method, "ok")
        if self._first_pending and text and method != "on_stream_start":
            self._first_pending = False
            m.first_text.labels(platform).observe(asyncio.get_running_loop().time() - self._started_at)
        return result

    def finishing(self) -> None:
        if self._finishing_at is None:
            self._finishing_at = asyncio.get_running_loop().time()

    def ended(self, report: "DeliveryReport") -> None:
        if self._in_flight:
            self._in_flight = False
            self._m.in_flight.labels(self._platform).dec()
        if report.delivered and not report.interrupted and self._finishing_at is not None:
            elapsed = asyncio.get_running_loop().time() - self._finishing_at
            self._m.final_latency.labels(self._platform).observe(elapsed)


class SourcedCounter:
    """A counter without labels: what ``inc()`` added plus a count kept elsewhere, read at each scrape.

    The inbound runtime already counts its dedupe hits, and a coordination
    backend its lease takeovers; reading those numbers when Prometheus asks
    keeps every hot path free of metrics code. Code that has no count of its
    own calls ``inc()``.
    """

    def __init__(self, name: str, documentation: str, source: Callable[[], float]) -> None:
        self.name = name
        self.documentation = documentation
        self.source = source
        self.counted = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.counted += amount

    @property
    def value(self) -> float:
        return self.counted + float(self.source())

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self.name, self.documentation, value=self.value)

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self.name, self.documentation)


class PlatformConnected:
    """``hermes_platform_connected{platform}``: what each platform's client last reported, read at each scrape."""

    NAME = "hermes_platform_connected"
    DOC = "1 while the platform's client reports it reachable, 0 after it reported a disconnection or stopped."

    def __init__(self, status: "PlatformStatuses") -> None:
        self.status = status

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(self.NAME, self.DOC, labels=["platform"])
        for platform in self.status.all():
            if platform.connection is not None:  # a client that never reported is not guessed at
                family.add_metric([platform.name], 1.0 if platform.state() == "connected" else 0.0)
        yield family

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(self.NAME, self.DOC, labels=["platform"])


def metrics_route(api_server: Any, metrics: "Callable[[], GatewayMetrics]",
                  ) -> "Callable[[web.Request], Awaitable[web.StreamResponse]]":
    """``GET /metrics`` for a gateway whose listener serves no API (webhooks only).

    The same rules as the API server's ``/metrics``: no key (Prometheus
    scrapes without one), but the API server's Host and Origin checks (a
    keyless loopback listener answers only ``localhost`` Host names; a
    browser origin only if listed in ``api_server.cors_origins``).
    """
    from aiohttp import web

    from .http.cors import Cors
    from .http.errors import ApiError
    from .http.guards import RequestGuard

    guard = RequestGuard(api_server, Cors(api_server.cors_origins))

    async def serve_metrics(request: web.Request) -> web.StreamResponse:
        try:
            guard.check(request)
        except ApiError as exc:
            return exc.response()
        body, content_type = metrics().render(request.headers.get("Accept"))
        return web.Response(body=body, headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
    return serve_metrics
