"""A local OpenTelemetry collector for tests: ``POST /v1/traces`` on 127.0.0.1, the spans decoded and kept.

Point ``telemetry.otlp_endpoint`` at :attr:`OtlpReceiver.url` and read what
the gateway exported: :attr:`OtlpReceiver.spans`, grouped by trace with
:meth:`OtlpReceiver.traces`. The body is decoded with ``opentelemetry-proto``
(the protobuf classes the exporter itself encodes with; installed with the
``telemetry`` extra), imported when a receiver is made, never by
``import hermes_gateway.testing``.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web

from .local import serve_locally

#: ``Span.kind`` of the OTLP protocol, by name.
SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
#: ``Status.code`` of the OTLP protocol, by name.
STATUS_CODES = {0: "unset", 1: "ok", 2: "error"}


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the collector got it (ids in hex, as a tracing UI shows them)."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[str, ...] = ()
    status: str = "unset"
    service: str = ""


class OtlpReceiver:
    """An OTLP/HTTP trace receiver; use ``async with OtlpReceiver() as receiver:``."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self._request_type = trace_service_pb2.ExportTraceServiceRequest
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> "OtlpReceiver":
        app = web.Application()
        app.router.add_post("/v1/traces", self._traces)
        self._runner = await serve_locally(app)
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "OtlpReceiver":
        return await self.start()

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def traces(self) -> dict[str, list[ReceivedSpan]]:
        """The spans received so far, by trace id, each trace's in the order they started."""
        found: dict[str, list[ReceivedSpan]] = {}
        for span in sorted(self.spans, key=lambda s: s.start_ns):
            found.setdefault(span.trace_id, []).append(span)
        return found

    def clear(self) -> None:
        self.spans.clear()

    async def _traces(self, request: web.Request) -> web.Response:
        body = await request.read()
        encoding = request.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        message = self._request_type()
        message.ParseFromString(body)
        self.requests += 1
        for resource_spans in message.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(ReceivedSpan(
                        name=span.name, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex() or None, kind=SPAN_KINDS.get(span.kind, str(span.kind)),
                        start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        events=tuple(e.name for e in span.events),
                        status=STATUS_CODES.get(span.status.code, str(span.status.code)),
                        service=str(resource.get("service.name", ""))))
        return web.Response(body=b"", content_type="application/x-protobuf")


def _value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as Python (a string, a number, a bool, a tuple of them)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    if kind is None:
        return None
    return getattr(value, kind)
