"""``telemetry: {otlp_endpoint, service_name, sample_ratio}``: OpenTelemetry traces over OTLP/HTTP (off by default).

Set ``otlp_endpoint`` and every turn becomes one trace (receive, queue wait,
the upstream calls, the tools, the platform calls, the final text), every
API request another (:mod:`hermes_gateway._core.telemetry`). The packages
are an optional extra (``hermes-gateway[telemetry]``): a config that sets
the endpoint without them installed is refused here, in one line naming the
extra, rather than failing at the first turn. Only their presence is
checked (``find_spec``): nothing of OpenTelemetry is imported by parsing.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..telemetry.options import TelemetrySettings

#: The OTLP/HTTP path of traces, appended to an endpoint given as the collector's base URL.
TRACES_PATH = "/v1/traces"
#: What installs the packages the exporter needs.
EXTRA = "pip install 'hermes-gateway[telemetry]'"
#: The modules that must be importable when the endpoint is set (the SDK and its OTLP/HTTP exporter).
REQUIRED_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter")

__all__ = ["EXTRA", "REQUIRED_MODULES", "TRACES_PATH", "TelemetrySettings", "parse_telemetry"]


def parse_telemetry(parser: Any, value: Any) -> TelemetrySettings:
    """The ``telemetry:`` section (``parser`` is the config's ``_Parser``: one-line errors naming the key)."""
    section = parser.section(value, "telemetry", ("otlp_endpoint", "service_name", "sample_ratio"))
    ratio = parser.get(section, "telemetry", "sample_ratio", "number", 1.0, minimum=0, maximum=1)
    name = parser.get(section, "telemetry", "service_name", "str", "hermes-gateway").strip()
    if not name:
        raise parser.fail("telemetry.service_name", "a non-empty name for the traces' service.name")
    endpoint = parser.get(section, "telemetry", "otlp_endpoint", "url", None)
    if endpoint is not None:
        endpoint = traces_url(endpoint)
        missing = [module for module in REQUIRED_MODULES if not _installed(module)]
        if missing:
            raise parser.fail("telemetry.otlp_endpoint", f"the OpenTelemetry packages, which are not installed "
                                                         f"(no module {missing[0]}): {EXTRA}")
    return TelemetrySettings(otlp_endpoint=endpoint, service_name=name, sample_ratio=float(ratio))


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to: ``endpoint`` itself when it ends in ``/v1/traces``, else that path added
    (a collector's base URL, ``http://collector:4318``, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is read)."""
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    if not path.endswith(TRACES_PATH):
        path += TRACES_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing (or broken)
        return False
