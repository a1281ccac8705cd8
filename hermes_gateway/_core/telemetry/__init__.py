"""Traces of turns and API requests (``telemetry.otlp_endpoint``): the tiny API the rest of the core calls.

Off by default, and then it must cost nothing: every function here is one
check of a module global and returns what it was given (the same awaitable,
the same async iterator; no wrapper, no allocation), so the places that call
it (the inbound runtime, the agent, the delivery core, the API server) stay
as fast as without it — the delivery benchmark's instruction counts are
unchanged (bench/README.md, "Traces"). Nothing of OpenTelemetry is imported
unless an endpoint is set: :mod:`.tracing` imports it, and only :func:`start`
imports :mod:`.tracing`.

On, one turn is one trace (:mod:`.tracing` says which spans and attributes):
the inbound runtime stamps a message when it is received and queued
(:func:`received`, :func:`queued`, keyed by the message's reply future),
runs the turn through :func:`turn` (the root span, current for everything
the turn does), and the agent and the delivery core wrap their calls
(:func:`upstream_call`, :func:`tool_call`, :func:`platform_call`,
:func:`final`): a call outside a sampled trace (a reaction before the turn,
``ask``) gets no span of its own. An API request is another trace
(:func:`add_request_spans`, :func:`note_model`). Log lines written inside a
sampled trace carry its id (:func:`trace_id`, read by the log formatters).

Tracing is per process (the spans' context is a context variable, as
OpenTelemetry's is): the first gateway started with an endpoint turns it on,
the last one stopped turns it off and flushes, bounded by :data:`STOP_BOUND`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Sequence, TypeVar

if TYPE_CHECKING:
    from aiohttp import web

    from .options import TelemetrySettings
    from .tracing import Tracing

T = TypeVar("T")
E = TypeVar("E")

#: Seconds the gateway's stop waits for the last spans to reach the collector (one that refuses connections or
#: never answers must not hold the stop); what is not sent by then is dropped, in one warning line.
STOP_BOUND = 2.0

_tracing: "Tracing | None" = None   # None: off (the default); every function below then returns at once
_owners: list[object] = []          # the gateways that asked for tracing and have not stopped


def received(handle: object) -> None:
    """A message came in; ``handle`` (its reply future) names it until its turn starts (:func:`turn`)."""
    if _tracing is not None:
        _tracing.received(handle)


def queued(handle: object) -> None:
    """The message passed its checks and waits in its chat's queue: its receive ends, its queue wait begins."""
    if _tracing is not None:
        _tracing.queued(handle)


def turn(call: Awaitable[T], messages: Sequence[Any], handles: Sequence[object]) -> Awaitable[T]:
    """``call`` (the turn answering ``messages``, whose reply futures are ``handles``) as the root of a trace."""
    if _tracing is None:
        return call
    return _tracing.turn(call, messages, handles)


def upstream_call(source: AsyncGenerator[E, None], call: Any, model: str) -> AsyncGenerator[E, None]:
    """One upstream request's events (``call``: the ``ModelCall`` it fills, read for tokens at its end)."""
    if _tracing is None:
        return source
    return _tracing.upstream_call(source, call, model)


def tool_call(call: Awaitable[T], name: str) -> Awaitable[T]:
    """One tool call (its approval included); its outcome is the ``ToolOutcome`` it returns."""
    if _tracing is None:
        return call
    return _tracing.tool_call(call, name)


def platform_call(call: Awaitable[T], method: str) -> Awaitable[T]:
    """One call into a chat (``method``: the hook, or what the call does), its outcome and a 429's retry_after."""
    if _tracing is None:
        return call
    return _tracing.platform_call(call, method)


def final(call: Awaitable[T]) -> Awaitable[T]:
    """The delivery of a reply's final text and media; the platform calls it makes are its children."""
    if _tracing is None:
        return call
    return _tracing.final(call)


def note_model(model: str) -> None:
    """The model an API request asked for, on its span."""
    if _tracing is not None:
        _tracing.note_model(model)


def trace_id() -> str | None:
    """The id of the sampled trace this code runs in (32 hex digits), for log lines; None outside one."""
    if _tracing is None:
        return None
    return _tracing.trace_id()


def add_request_spans(app: "web.Application") -> None:
    """With tracing on, one trace per request to ``/v1/...`` of ``app`` (a middleware; none when off)."""
    if _tracing is not None:
        app.middlewares.append(_tracing.request_middleware())


def start(owner: object, settings: "TelemetrySettings") -> None:
    """``owner`` (a gateway) starts: with an endpoint set, tracing is on until the last such owner stops.

    The first owner's settings make the exporter; a later one with other settings shares it.
    """
    global _tracing
    if not settings.enabled or any(o is owner for o in _owners):
        return
    if _tracing is None:
        from .tracing import Tracing

        _tracing = Tracing(settings)
    _owners.append(owner)


async def stop(owner: object) -> None:
    """``owner`` stops; the last one turns tracing off and sends what is left (at most :data:`STOP_BOUND` s)."""
    global _tracing
    if not any(o is owner for o in _owners):
        return
    _owners[:] = [o for o in _owners if o is not owner]
    if _owners or _tracing is None:
        return
    tracing, _tracing = _tracing, None
    await tracing.shutdown(STOP_BOUND)
