"""The parsed ``telemetry:`` section (:mod:`..settings.telemetry` parses it): a plain value, kept beside the traces'
API, which sits beneath the settings every part reads, so :func:`~hermes_gateway._core.telemetry.start` can name it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TelemetrySettings:
    """``telemetry:``; ``otlp_endpoint`` None (the default) = no traces, nothing of OpenTelemetry imported."""

    otlp_endpoint: str | None = None
    service_name: str = "hermes-gateway"
    sample_ratio: float = 1.0

    @property
    def enabled(self) -> bool:
        return self.otlp_endpoint is not None
