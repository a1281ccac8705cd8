"""The spans themselves, on OpenTelemetry's SDK, exported over OTLP/HTTP (imported only with an endpoint set).

One trace per turn, its root the span ``turn`` (``hermes.platform``,
``hermes.chat.kind``, how many messages it answers, how it ended; never a
message's text, never a chat or user id), started when its first message
was received. Its children:

* ``receive`` — per message, from its receipt until it passed its checks
  (dedupe, access, the replicas' admission) and entered its chat's queue;
* ``queue wait`` — per message, from then until the turn started (a reply
  running in the chat, the chat's lease);
* ``upstream call`` — each request to a model (a fallback's, a retry's
  too): ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` /
  ``output_tokens`` as the upstream reported them, the finish reason, and
  the time to its first streamed event (``hermes.time_to_first_token``, in
  seconds, and a ``first token`` event);
* ``tool call`` — each tool the model called (``gen_ai.tool.name``,
  ``hermes.outcome`` ok / error / cancelled; a question asked for its
  approval is its child);
* ``platform call`` — each call the delivery core made into the chat
  (``hermes.platform.method``: the hook or what the call does;
  ``hermes.outcome`` ok / rate_limited / failed / maybe_delivered /
  cancelled; after a 429 ``hermes.retry_after`` in seconds and
  ``hermes.rate_limit.scope``); those of the final text are children of
* ``final`` — the final text and the media, delivered.

One trace per API request to ``/v1/...``: a server span named
``METHOD ROUTE`` (``http.route``, ``http.response.status_code``,
``gen_ai.request.model`` once the body named one), its upstream and tool
calls as children.

A turn that the sampler (``telemetry.sample_ratio``) leaves out gets a
non-recording root, and its calls get no spans at all (each wrapper checks
the current span first), so an unsampled turn costs almost nothing too.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from typing import Any, AsyncGenerator, Awaitable, Sequence, TypeVar

from aiohttp import web
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..errors import DeliveryError, RateLimited
from ..masking import mask_url

log = logging.getLogger(__name__)

T = TypeVar("T")
E = TypeVar("E")

#: Seconds one export may take, retries included (the exporter's own default is 10): a collector that never
#: answers holds the exporting thread no longer than this, and never the event loop.
EXPORT_TIMEOUT = 5.0
#: The daemon thread that sends the last spans when the gateway stops.
FLUSH_THREAD = "hermes-telemetry-flush"
#: Only requests to these paths are traced (API calls: not health checks, metrics scrapes or webhooks).
API_PREFIX = "/v1/"


class Tracing:
    """The tracer provider, its batch exporter, and the spans of turns, calls and API requests."""

    def __init__(self, settings: Any) -> None:
        self.endpoint: str = settings.otlp_endpoint
        self.exporter = _Exporter(OTLPSpanExporter(endpoint=self.endpoint, timeout=EXPORT_TIMEOUT))
        # shutdown_on_exit=False: its atexit hook would wait up to 30 s for an unreachable collector; the
        # gateway's stop flushes instead, bounded
        self.provider = TracerProvider(resource=Resource.create({"service.name": settings.service_name}),
                                       sampler=ParentBased(TraceIdRatioBased(settings.sample_ratio)),
                                       shutdown_on_exit=False)
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("hermes_gateway")
        #: reply future -> [received, queued] (ns since the epoch): a message's times until its turn starts
        self._stamps: weakref.WeakKeyDictionary[object, list[int]] = weakref.WeakKeyDictionary()

    # -- a turn ----------------------------------------------------------------------------------------------

    def received(self, handle: object) -> None:
        now = time.time_ns()
        self._stamps[handle] = [now, now]

    def queued(self, handle: object) -> None:
        stamp = self._stamps.get(handle)
        if stamp is not None:
            stamp[1] = time.time_ns()

    def turn(self, call: Awaitable[T], messages: Sequence[Any], handles: Sequence[object]) -> Awaitable[T]:
        return self._turn(call, messages, handles)

    async def _turn(self, call: Awaitable[T], messages: Sequence[Any], handles: Sequence[object]) -> T:
        now = time.time_ns()
        stamps = [self._stamps.pop(handle, None) for handle in handles]
        last = messages[-1]
        span = self.tracer.start_span(
            "turn", start_time=min((s[0] for s in stamps if s is not None), default=now),
            attributes={"hermes.platform": last.platform, "hermes.chat.kind": last.chat_kind,
                        "hermes.turn.messages": len(messages)})
        parent = trace.set_span_in_context(span)
        if span.is_recording():
            for index, stamp in enumerate(stamps):
                if stamp is None:
                    continue
                got, waiting = stamp[0], min(stamp[1], now)
                attributes = {"hermes.message.index": index}
                self.tracer.start_span("receive", parent, start_time=got, attributes=attributes).end(waiting)
                self.tracer.start_span("queue wait", parent, start_time=waiting, attributes=attributes).end(now)
        token = otel_context.attach(parent)
        try:
            report = await call
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
        try:
            for name in ("delivered", "interrupted", "calls", "rate_limited"):
                value = getattr(report, name, None)
                if isinstance(value, (bool, int)):
                    span.set_attribute(f"hermes.turn.{name}", value)
            if getattr(report, "error", None) or getattr(report, "model_error", None):
                span.set_status(Status(StatusCode.ERROR, "the reply was not delivered in full"))
        finally:
            span.end()
        return report

    # -- calls inside a trace ----------------------------------------------------------------------------------

    def upstream_call(self, source: AsyncGenerator[E, None], call: Any, model: str) -> AsyncGenerator[E, None]:
        if not trace.get_current_span().is_recording():
            return source
        return self._upstream(source, call, model)

    async def _upstream(self, source: AsyncGenerator[E, None], call: Any, model: str) -> AsyncGenerator[E, None]:
        # not made current: the consumer's code runs between the events (a platform call is no child of this)
        span = self.tracer.start_span("upstream call", kind=SpanKind.CLIENT,
                                      attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": model})
        started = time.perf_counter()
        first = True
        try:
            async for event in source:
                if first:
                    first = False
                    span.set_attribute("hermes.time_to_first_token", time.perf_counter() - started)
                    span.add_event("first token")
                yield event
            usage = getattr(call, "usage", None)
            if usage is not None and not getattr(usage, "estimated", False):
                span.set_attribute("gen_ai.usage.input_tokens", int(usage.prompt_tokens))
                span.set_attribute("gen_ai.usage.output_tokens", int(usage.completion_tokens))
            reason = getattr(call, "finish_reason", None)
            if isinstance(reason, str):
                span.set_attribute("gen_ai.response.finish_reasons", (reason,))
        except GeneratorExit:
            span.set_attribute("hermes.outcome", "closed")  # the turn stopped reading it (interrupted, cut)
            raise
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            try:
                await source.aclose()
            finally:
                span.end()

    def tool_call(self, call: Awaitable[T], name: str) -> Awaitable[T]:
        if not trace.get_current_span().is_recording():
            return call
        return self._tool(call, name)

    async def _tool(self, call: Awaitable[T], name: str) -> T:
        span = self.tracer.start_span("tool call", attributes={"gen_ai.operation.name": "execute_tool",
                                                               "gen_ai.tool.name": name})
        token = otel_context.attach(trace.set_span_in_context(span))  # a tool's own task: safe to make current
        try:
            outcome = await call
            ok = bool(getattr(outcome, "ok", True))
            span.set_attribute("hermes.outcome", "ok" if ok else "error")
            if not ok:
                span.set_status(Status(StatusCode.ERROR, "the tool call failed (its error went to the model)"))
            return outcome
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    def platform_call(self, call: Awaitable[T], method: str) -> Awaitable[T]:
        if not trace.get_current_span().is_recording():
            return call
        return self._platform(call, method)

    async def _platform(self, call: Awaitable[T], method: str) -> T:
        span = self.tracer.start_span("platform call", kind=SpanKind.CLIENT,
                                      attributes={"hermes.platform.method": method})
        try:
            result = await call
        except BaseException as exc:
            _failed(span, exc)
            raise
        else:
            span.set_attribute("hermes.outcome", "ok")
            return result
        finally:
            span.end()

    def final(self, call: Awaitable[T]) -> Awaitable[T]:
        if not trace.get_current_span().is_recording():
            return call
        return self._final(call)

    async def _final(self, call: Awaitable[T]) -> T:
        span = self.tracer.start_span("final")
        token = otel_context.attach(trace.set_span_in_context(span))  # the reply's worker task: its calls nest
        try:
            return await call
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    # -- API requests ----------------------------------------------------------------------------------------

    def request_middleware(self) -> Any:
        tracer = self.tracer

        @web.middleware
        async def request_spans(request: web.Request, handler: Any) -> web.StreamResponse:
            if not request.path.startswith(API_PREFIX):
                return await handler(request)
            route = _route(request)
            span = tracer.start_span(f"{request.method} {route}", kind=SpanKind.SERVER,
                                     attributes={"http.request.method": request.method, "http.route": route})
            token = otel_context.attach(trace.set_span_in_context(span))
            status = 500
            try:
                response = await handler(request)
                status = response.status
                return response
            except web.HTTPException as exc:
                status = exc.status
                raise
            except asyncio.CancelledError:
                status = 499  # the client went away (nginx's convention, as the access log says)
                raise
            finally:
                otel_context.detach(token)
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
        return request_spans

    def note_model(self, model: str) -> None:
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute("gen_ai.request.model", model)

    # -- logs ------------------------------------------------------------------------------------------------

    def trace_id(self) -> str | None:
        context = trace.get_current_span().get_span_context()
        if not context.trace_flags.sampled:  # outside any span too (the invalid context is not sampled)
            return None
        return format(context.trace_id, "032x")

    # -- the end ---------------------------------------------------------------------------------------------

    async def shutdown(self, bound: float) -> bool:
        """Send what is left and stop, waiting at most ``bound`` seconds; False when the collector took longer.

        The SDK's shutdown blocks (it joins the exporting thread, up to 30 s) and may wait on the network, so
        it runs in a daemon thread of its own: past the bound the gateway goes on stopping, and whatever that
        thread still holds is dropped with the process (or sent, if the collector answers in time after all).
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def finished() -> None:
            if not done.done():
                done.set_result(None)

        def run() -> None:
            try:
                self.provider.shutdown()
            except Exception:  # never the gateway's problem
                log.exception("telemetry: shutting down the exporter failed")
            finally:
                try:
                    loop.call_soon_threadsafe(finished)
                except RuntimeError:  # the loop is closed: nobody waits any more
                    pass

        threading.Thread(target=run, name=FLUSH_THREAD, daemon=True).start()
        try:
            await asyncio.wait_for(asyncio.shield(done), bound)
            return True
        except TimeoutError:
            self.exporter.shutdown()  # no more retries: the thread ends once a request in flight does
            log.warning("telemetry: the collector at %s did not take the last spans within %g s; "
                        "they are dropped", mask_url(self.endpoint), bound)
            return False


class _Exporter(SpanExporter):
    """The OTLP exporter, shut down once (the gateway's stop may do it before the SDK's shutdown does)."""

    def __init__(self, exporter: OTLPSpanExporter) -> None:
        self._exporter = exporter
        self._lock = threading.Lock()
        self._down = False

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        return self._exporter.export(spans)

    def shutdown(self) -> None:
        with self._lock:
            if self._down:
                return
            self._down = True
        self._exporter.shutdown()  # aborts the retries' back-off waits

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _route(request: web.Request) -> str:
    """The route's template (``/v1/models/{model}``), never the path itself (ids, and no unbounded names)."""
    resource = request.match_info.route.resource
    canonical = resource.canonical if resource is not None else None
    return canonical or "(unmatched)"


def _failed(span: Any, exc: BaseException) -> None:
    """How a span's work ended when it raised: the outcome attribute and the status, never the message text."""
    if isinstance(exc, asyncio.CancelledError):
        span.set_attribute("hermes.outcome", "cancelled")
        return
    if isinstance(exc, RateLimited):
        span.set_attributes({"hermes.outcome": "rate_limited", "hermes.retry_after": exc.retry_after,
                             "hermes.rate_limit.scope": exc.scope})
        span.set_status(Status(StatusCode.ERROR, f"rate limited: retry after {exc.retry_after:g} s"))
        return
    if isinstance(exc, DeliveryError):
        span.set_attribute("hermes.outcome", "maybe_delivered" if exc.maybe_delivered else "failed")
        span.set_attribute("hermes.retryable", exc.retryable)
    else:
        span.set_attribute("hermes.outcome", "failed")
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
