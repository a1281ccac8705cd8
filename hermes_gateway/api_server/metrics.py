"""Prometheus text metrics, kept by hand: a few counters, one gauge, one histogram.

Five families are enough for an operator to see load, latency and trouble,
and writing them out by hand avoids a dependency and a lock (everything runs
on one event loop).
"""

from __future__ import annotations

import bisect
from collections import Counter

TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1


class Metrics:
    """What ``GET /metrics`` reports."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, int]] = Counter()  # (route, status)
        self.errors: Counter[str] = Counter()                 # kind
        self.active_streams = 0
        self.deltas = 0
        self.ttft = Histogram(TTFT_BUCKETS)
        self.platform_events: Counter[tuple[str, str]] = Counter()  # (platform, event): webhook plugins count here

    def platform_event(self, platform: str, event: str) -> None:
        """A platform plugin saw ``event`` (e.g. WhatsApp's ``status_delivered``); shown in ``/metrics``."""
        self.platform_events[(platform, event)] += 1

    def request(self, route: str, status: int) -> None:
        self.requests[(route, status)] += 1

    def error(self, kind: str) -> None:
        self.errors[kind] += 1

    def render(self) -> str:
        lines = [
            "# HELP hermes_api_requests_total API requests by route and HTTP status.",
            "# TYPE hermes_api_requests_total counter",
        ]
        for (route, status), n in sorted(self.requests.items()):
            lines.append(f'hermes_api_requests_total{{route="{route}",status="{status}"}} {n}')
        lines += [
            "# HELP hermes_api_active_streams SSE streams open right now.",
            "# TYPE hermes_api_active_streams gauge",
            f"hermes_api_active_streams {self.active_streams}",
            "# HELP hermes_api_deltas_total Text deltas sent to clients as SSE events.",
            "# TYPE hermes_api_deltas_total counter",
            f"hermes_api_deltas_total {self.deltas}",
            "# HELP hermes_api_errors_total Failed turns and refused requests by kind.",
            "# TYPE hermes_api_errors_total counter",
        ]
        for kind, n in sorted(self.errors.items()):
            lines.append(f'hermes_api_errors_total{{kind="{kind}"}} {n}')
        lines += [
            "# HELP hermes_api_time_to_first_token_seconds From request received to first text sent.",
            "# TYPE hermes_api_time_to_first_token_seconds histogram",
        ]
        cumulative = 0
        for bound, n in zip(self.ttft.buckets, self.ttft.counts):
            cumulative += n
            lines.append(f'hermes_api_time_to_first_token_seconds_bucket{{le="{bound:g}"}} {cumulative}')
        lines.append(f'hermes_api_time_to_first_token_seconds_bucket{{le="+Inf"}} {self.ttft.count}')
        lines.append(f"hermes_api_time_to_first_token_seconds_sum {self.ttft.total:.6f}")
        lines.append(f"hermes_api_time_to_first_token_seconds_count {self.ttft.count}")
        lines += [
            "# HELP hermes_platform_events_total Events platform plugins received (webhook statuses, refusals).",
            "# TYPE hermes_platform_events_total counter",
        ]
        for (platform, event), n in sorted(self.platform_events.items()):
            lines.append(f'hermes_platform_events_total{{platform="{platform}",event="{event}"}} {n}')
        return "\n".join(lines) + "\n"
