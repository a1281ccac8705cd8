"""``AIAgent``: one conversation turn against an OpenAI-compatible upstream, with tools.

A turn is: send the conversation, stream the answer as events, run any
tool calls the model asked for, send their results back, and repeat until
the model answers in text (or ``model.max_turns`` calls were made). It
always ends with exactly one :class:`TurnEnd`, whatever happened upstream.

Resilience, in the order it applies to each model call:

1. stream from the primary endpoint (unless it is known not to stream);
2. if that stream fails, one non-streaming call to the same endpoint —
   skipped when the endpoint is plainly down (connection refused, 5xx or
   429 after the SDK's own retries, auth errors);
3. then the same for each ``model.fallback`` endpoint, in order.

If a failed attempt already showed text, a :class:`StreamReset` precedes
the replacement and the turn's text is then streamed again from its start,
so consumers never show both. Text of successive model calls in one turn
is joined with a blank line; ``TurnEnd.raw`` is exactly the text streamed
since the last reset, ``TurnEnd.reply`` its post-processed form, and
``TurnEnd.messages`` the turn's new history entries (the user message,
assistant messages with their tool calls, tool results).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import weakref
from contextlib import aclosing
from typing import Any, AsyncGenerator, AsyncIterator, Callable, Sequence

from ..config import Config, Endpoint, MediaConfig, ModelConfig
from ..events import StreamEvent, StreamReset, TextDelta, ToolCallFinished, TurnEnd, UpstreamRefusal, UsageReport
from ..media import Media
from ..media_dir import MediaDirectory
from ..reasoning import postprocess_reply, strip_thinking
from ..telemetry import tool_call, upstream_call
from ..toolbox import ToolBox
from ..tools import Tool, collect_tools, installed_tools
from .chat_completions import complete_chat, stream_chat
from ..errors import HermesError
from .errors import (AllUpstreamsFailed, describe, endpoint_is_down, redact, refusal_of,
                     refuses_the_request, rejects_usage_option, streaming_unsupported)
from .guard import Interrupted, ReadGuard
from .limits import REPLY_CUT_NOTE
from .options import NO_OPTIONS, TurnOptions, chat_body, later_round, responses_body
from .responses_api import build_request, complete_responses, stream_responses
from .results import ModelCall, ToolCall, add_usage, estimate_usage
from .tool_runner import Approver, ToolOutcome, refusal, run_tool
from .upstream import STREAM_SUPPORT, Upstream, UpstreamPool
from .vision import without_images

log = logging.getLogger(__name__)

SEPARATOR = "\n\n"
#: With ``model.reasoning_starts_open`` every model call's text starts inside reasoning, the first one
#: included (the filter's ``starts_open``); a later call's start is marked in the text itself.
SEPARATOR_STARTS_OPEN = SEPARATOR + "<think>"
StreamCallback = Callable[[str | None], Any]


class ReplyCut(HermesError):
    """The turn's text reached ``model.max_reply_chars``: the model call is stopped as an interrupt stops it."""


class _Turn:
    """The state of one turn: what has been shown, and how to stop it."""

    __slots__ = ("committed", "has_content", "orphan", "pending", "guard", "interrupted", "usage", "separator",
                 "options", "approver", "offer", "__weakref__")

    def __init__(self, separator: str = SEPARATOR, options: TurnOptions = NO_OPTIONS) -> None:
        self.options = options               # an API client's parameters and tools (none for chats)
        self.offer: GatewayOffer | None = None  # the gateway's tools as this turn offers them; None: all, as named
        self.approver: Approver | None = None  # asked before a tool runs (tools.approval); None: every tool runs
        self.separator = separator           # between the text of successive model calls
        self.committed: list[str] = []       # text of finished model calls, separators included
        self.has_content = False             # committed holds something other than whitespace
        self.orphan: ModelCall | None = None  # a failed call whose text is on screen, awaiting a reset
        self.pending: ModelCall | None = None  # the call cut short by an interrupt
        self.guard: ReadGuard | None = None
        self.interrupted = False
        self.usage: UsageReport | None = None

    def interrupt(self) -> None:
        self.interrupted = True
        if self.guard is not None:
            self.guard.interrupt()

    def commit(self, call: ModelCall) -> None:
        if call.separated:
            self.committed.append(self.separator)
        text = call.text
        if text:
            self.committed.append(text)
            if not self.has_content and text.strip():
                self.has_content = True

    def raw(self) -> str:
        parts = list(self.committed)
        tail = self.pending or self.orphan
        if tail is not None and tail.text_parts:
            if tail.separated:
                parts.append(self.separator)
            parts.extend(tail.text_parts)
        return "".join(parts)


class GatewayOffer:
    """The gateway's own tools as one API turn offers them: none (``TurnOptions.gateway_tools`` off), or all,
    each under the name the model sees: a tool whose name a client tool took gets a ``gateway_`` prefix
    (``api_server.gateway_tools: always``), so neither side's tool is refused or hidden."""

    __slots__ = ("tools", "chat", "responses")

    def __init__(self, tools: dict[str, Tool]) -> None:
        self.tools = tools  # by the name the model sees
        self.chat = [_renamed(tool.chat_schema(), name, nested=True) for name, tool in tools.items()]
        self.responses = [_renamed(tool.responses_schema(), name, nested=False) for name, tool in tools.items()]

    @classmethod
    def of(cls, tools: dict[str, Tool], options: TurnOptions) -> "GatewayOffer | None":
        """The offer for ``options``; None when it is every tool under its own name (chats, most API turns)."""
        if not options.gateway_tools:
            return cls({})
        taken = options.client_tool_names
        if taken.isdisjoint(tools):
            return None
        offered: dict[str, Tool] = {}
        for name, tool in tools.items():
            shown = name
            while shown in taken or shown in tools and shown != name:
                shown = PREFIX + shown
            offered[shown] = tool
        return cls(offered)


#: What a gateway tool's name gets in front when a client tool has the same name.
PREFIX = "gateway_"


def _renamed(schema: dict[str, Any], name: str, *, nested: bool) -> dict[str, Any]:
    if nested:
        function = schema["function"]
        return schema if function.get("name") == name else {**schema, "function": {**function, "name": name}}
    return schema if schema.get("name") == name else {**schema, "name": name}


class AIAgent:
    """Talks to the model for one conversation; the gateway, API server and terminal all use it.

    ``stream_callback(text)`` (the seed's interface) receives each visible
    text delta, and ``stream_callback(None)`` when a stream ends. Without a
    callback, :meth:`arun_conversation` uses plain non-streaming calls.
    :meth:`astream` always streams and yields typed events.

    ``tools=None`` collects the tools plugins register (pass ``plugins`` to
    reuse an already loaded plugin manager). ``max_retries`` is the retry
    budget per request (429/5xx/connection errors, the SDK's policy whichever
    ``model.transport`` sends it) before the next endpoint is tried;
    ``tool_timeout`` bounds each tool call. ``media_directory`` is where a
    tool's media is kept (default ``$HERMES_HOME/media``): bytes are written
    there, paths outside it refused.
    """

    def __init__(self, model: ModelConfig | str | None = None, *, base_url: str | None = None,
                 api_key: str | None = None, tools: Sequence[Tool] | None = None,
                 stream_callback: StreamCallback | None = None, plugins: Any = None, max_retries: int = 2,
                 tool_timeout: float | None = 120.0,
                 media_directory: str | os.PathLike[str] | MediaDirectory | None = None) -> None:
        if not isinstance(model, ModelConfig):
            # Script style: AIAgent("gpt-4o-mini", base_url=..., api_key=...); no base_url = the demo model.
            endpoint = Endpoint(base_url=base_url, api_key=api_key, name=model or Endpoint.name)
            model = ModelConfig(endpoint=endpoint)
        elif base_url or api_key:
            raise TypeError("pass base_url/api_key inside the ModelConfig, or a model name instead of it")
        self.model = model
        self.tool_timeout = tool_timeout
        # where a tool's media is kept (bytes written, paths checked); default $HERMES_HOME/media
        if not isinstance(media_directory, MediaDirectory):
            config = MediaConfig()
            media_directory = MediaDirectory(media_directory if media_directory is not None else config.path(),
                                             keep=config.keep_seconds)
        self.media_directory = media_directory
        if tools is None:
            tools = collect_tools(plugins) if plugins is not None else installed_tools()
        # A ToolBox (the gateway's: MCP tools come and go) is read again whenever it changed.
        self._live_tools = tools if isinstance(tools, ToolBox) else None
        self._tools_version: Any = None
        self._set_tools(tools.snapshot() if isinstance(tools, ToolBox) else tuple(tools))
        self.stream_callback = stream_callback
        self._pool = UpstreamPool((self.model.endpoint, *self.model.fallback), self.model.timeouts,
                                  max_retries=max_retries, demo_tokens_per_second=self.model.demo_tokens_per_second,
                                  transport=self.model.transport)
        self._turns: weakref.WeakSet[_Turn] = weakref.WeakSet()

    def _set_tools(self, tools: Sequence[Tool]) -> None:
        self._tools: dict[str, Tool] = {t.name: t for t in tools}
        self._chat_tool_schemas = [t.chat_schema() for t in tools]
        self._responses_tool_schemas = [t.responses_schema() for t in tools]

    def _refresh_tools(self) -> None:
        live = self._live_tools
        if live is not None and live.version != self._tools_version:
            self._tools_version = live.version
            self._set_tools(live.snapshot())

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools the model is offered now, by name (an MCP server's only while it is up)."""
        self._refresh_tools()
        return self._tools

    @property
    def _chat_tools(self) -> list[dict[str, Any]]:
        self._refresh_tools()
        return self._chat_tool_schemas

    @property
    def _responses_tools(self) -> list[dict[str, Any]]:
        self._refresh_tools()
        return self._responses_tool_schemas

    @property
    def reasoning_starts_open(self) -> bool:
        """``model.reasoning_starts_open``: consumers of :meth:`astream` filter reasoning with it."""
        return self.model.reasoning_starts_open

    def _new_turn(self, options: TurnOptions | None = None) -> _Turn:
        return _Turn(SEPARATOR_STARTS_OPEN if self.model.reasoning_starts_open else SEPARATOR,
                     options or NO_OPTIONS)

    @classmethod
    def from_config(cls, config: Config, tools: Sequence[Tool] | None = None,
                    stream_callback: StreamCallback | None = None, **kwargs: Any) -> "AIAgent":
        """An agent for ``config.model``; ``tools=None`` means the tools registered by plugins."""
        kwargs.setdefault("media_directory", MediaDirectory(config.media.path(), keep=config.media.keep_seconds))
        return cls(config.model, tools=tools, stream_callback=stream_callback, **kwargs)

    # -- public entry points -------------------------------------------------------------------

    def astream(self, message: str | list[dict[str, Any]] | None, history: Sequence[dict[str, Any]] | None = None,
                options: TurnOptions | None = None, approver: Approver | None = None) -> AsyncIterator[StreamEvent]:
        """Stream one turn as events; always ends with exactly one :class:`TurnEnd`.

        ``message`` is the user's content (text, or content parts with images);
        None continues ``history`` as it is (it ends with an API client's tool
        results). ``options``: an API client's parameters and tools.
        ``approver(name, arguments)``: awaited before each tool call; False
        means the tool does not run and the model reads "denied by the user"
        (``tools.approval``).
        Cancelling the task that iterates it (or ``aclose()`` on it) closes
        the upstream connection.
        """
        turn = self._new_turn(options)
        turn.approver = approver
        self._turns.add(turn)
        return self._run_turn(turn, message, history, stream=True)

    async def arun_conversation(self, message: str, history: Sequence[dict[str, Any]] | None = None) -> TurnEnd:
        """Run one turn to its end; feeds ``stream_callback`` when there is one."""
        callback = self.stream_callback
        turn = self._new_turn()
        self._turns.add(turn)
        end: TurnEnd | None = None
        async with aclosing(self._run_turn(turn, message, history, stream=callback is not None)) as events:
            async for event in events:
                kind = type(event)
                if callback is not None:
                    if kind is TextDelta:
                        _call_back(callback, event.text)  # type: ignore[union-attr]
                    elif kind is StreamReset:
                        _call_back(callback, None)  # the partial stream is over; the retry starts anew
                if kind is TurnEnd:
                    end = event  # type: ignore[assignment]
        if callback is not None:
            _call_back(callback, None)
        assert end is not None
        return end

    def run_conversation(self, message: str, history: Sequence[dict[str, Any]] | None = None) -> TurnEnd:
        """Synchronous :meth:`arun_conversation` for scripts (runs its own event loop)."""
        async def main() -> TurnEnd:
            try:
                return await self.arun_conversation(message, history)
            finally:
                await self._pool.aclose()
        return asyncio.run(main())

    def interrupt(self) -> None:
        """Stop every running turn of this agent promptly; each ends with ``TurnEnd(interrupted=True)``.

        Safe to call from another thread.
        """
        for turn in list(self._turns):
            turn.interrupt()

    async def aclose(self) -> None:
        """Close the HTTP clients (connections to the upstreams)."""
        await self._pool.aclose()

    async def __aenter__(self) -> "AIAgent":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the turn ------------------------------------------------------------------------------

    async def _run_turn(self, turn: _Turn, message: str | list[dict[str, Any]] | None,
                        history: Sequence[dict[str, Any]] | None, stream: bool) -> AsyncGenerator[StreamEvent, None]:
        guard = ReadGuard()
        turn.guard = guard
        if turn.interrupted:
            guard.interrupted = True
        messages = self._initial_messages(history)
        new_messages: list[dict[str, Any]] = []
        if message is not None:
            user = {"role": "user", "content": message}
            messages.append(user)
            new_messages.append(user)
        client_tools = turn.options.client_tool_names
        client_calls: list[ToolCall] = []
        finish_reason = "stop"
        media: list[Media] = []
        starts_open = self.model.reasoning_starts_open
        error: str | None = None
        interrupted = False
        refused: UpstreamRefusal | None = None
        note: str | None = None
        exhausted = False
        max_turns = self.model.max_turns
        if turn.options is not NO_OPTIONS:
            turn.offer = GatewayOffer.of(self.tools, turn.options)
        called: list[str] = []  # the gateway tools run this turn, for the log when it runs out of rounds
        try:
            for round_number in range(1, max_turns + 1):
                if round_number == 2:
                    turn.options = later_round(turn.options)  # tool_choice forced the first call only
                call: ModelCall | None = None
                # aclosing: if our consumer stops early, the upstream stream is closed now, not at GC.
                async with aclosing(self._call_model(turn, messages, stream)) as model_events:
                    async for event in model_events:
                        if isinstance(event, ModelCall):
                            call = event
                        else:
                            yield event
                assert call is not None
                turn.commit(call)
                usage = call.usage or estimate_usage(messages, call)
                turn.usage = add_usage(turn.usage, usage)
                yield usage
                tool_calls = call.final_tool_calls()
                reason = call.finish_reason
                if reason == "length" or reason == "content_filter":
                    finish_reason = reason
                    tool_calls = []  # cut short: arguments may be incomplete, nothing is run
                if client_tools:
                    # A call of the client's own tool ends the turn: the client runs it and sends the result.
                    # The gateway's calls of the same answer run first (their results join the turn's history).
                    client_calls = [c for c in tool_calls if c.name in client_tools]
                    if client_calls:
                        finish_reason = "tool_calls"
                content = strip_thinking(call.text, starts_open=starts_open) or None
                assistant: dict[str, Any] = {"role": "assistant", "content": content}
                if tool_calls:
                    assistant["tool_calls"] = [c.as_message() for c in tool_calls]
                messages.append(assistant)
                new_messages.append(assistant)
                if not tool_calls or finish_reason == "length":
                    break
                gateway_calls = [c for c in tool_calls if c.name not in client_tools] if client_calls else tool_calls
                if round_number == max_turns and not client_calls:
                    error = (f"stopped after {max_turns} model calls (model.max_turns): "
                             f"the model still wanted to call tools")
                    exhausted = True
                    log.warning("a turn stopped after %d model calls (model.max_turns); gateway tools run: %s; "
                                "the last answer asked for: %s", max_turns, _tally(called) or "none",
                                _tally([c.name for c in tool_calls]))
                    self._skip_tools(tool_calls, "not run: the turn reached model.max_turns", messages, new_messages)
                    break
                called.extend(c.name for c in gateway_calls)
                if gateway_calls:
                    async with aclosing(self._run_tools(guard, gateway_calls, messages, new_messages,
                                                        media, turn.approver, turn.offer)) as tool_events:
                        async for event in tool_events:
                            yield event
                if client_calls:
                    break
        except Interrupted:
            interrupted = True
            if turn.pending is not None and turn.pending.text:
                content = strip_thinking(turn.pending.text, starts_open=starts_open)
                new_messages.append({"role": "assistant", "content": content})
        except ReplyCut:
            # a model that does not stop: cut as an interrupt cuts (the upstream's connection closed), what was
            # said is kept and recorded, no tool runs; chats end the reply with the note
            log.warning("a reply reached model.max_reply_chars (%d); the turn ends cut", self.model.max_reply_chars)
            finish_reason, note = "length", REPLY_CUT_NOTE
            if turn.pending is not None and turn.pending.text:
                content = strip_thinking(turn.pending.text, starts_open=starts_open)
                new_messages.append({"role": "assistant", "content": content})
        except AllUpstreamsFailed as exc:
            error, refused = str(exc), exc.refusal
            log.warning("%s", error)
        except Exception as exc:  # a bug must still end the turn properly, with a readable reason
            log.exception("agent turn failed")
            error = f"internal error: {type(exc).__name__}: {exc}"
        finally:
            guard.close()
            self._turns.discard(turn)
        raw = turn.raw()
        yield TurnEnd(reply=postprocess_reply(raw, starts_open=starts_open), raw=raw, interrupted=interrupted,
                      error=error, usage=turn.usage, messages=new_messages, media=tuple(media),
                      tool_calls=tuple(c.as_message() for c in client_calls) if client_calls else (),
                      finish_reason=finish_reason, refusal=refused, note=note,
                      rounds_exhausted=exhausted)

    def _initial_messages(self, history: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
        messages = [dict(m) for m in history or ()]
        prompt = self.model.system_prompt
        if prompt and not (messages and messages[0].get("role") == "system"):
            messages.insert(0, {"role": "system", "content": prompt})
        return messages

    def _request(self, upstream: Upstream, messages: list[dict[str, Any]], options: TurnOptions = NO_OPTIONS,
                 offer: GatewayOffer | None = None) -> tuple[dict[str, Any], Any, Any]:
        endpoint = upstream.endpoint
        if endpoint.vision is False or (endpoint.vision is None and not self.model.vision):
            messages = without_images(messages)  # a fallback that cannot see: stand-ins, not a 400
        request: dict[str, Any]
        if endpoint.api_mode == "responses":
            if options is NO_OPTIONS:
                request = build_request(endpoint.name, messages, self._responses_tools)
            else:
                request = {**build_request(endpoint.name, messages, []),
                           **responses_body(options, self._responses_tools if offer is None else offer.responses)}
            return request, stream_responses, complete_responses
        request = {"model": endpoint.name, "messages": list(messages)}
        tools = self._chat_tools if offer is None else offer.chat  # (a property: read once)
        if options is not NO_OPTIONS:
            request.update(chat_body(options, tools))
        elif tools:
            request["tools"] = tools
        return request, stream_chat, complete_chat

    async def _call_model(self, turn: _Turn, messages: list[dict[str, Any]],
                          stream: bool) -> AsyncGenerator[StreamEvent | ModelCall, None]:
        """One model call with every fallback; yields its events, then the finished ModelCall."""
        guard = turn.guard
        assert guard is not None
        timeouts = self.model.timeouts
        max_chars = self.model.max_reply_chars
        failures: list[str] = []
        refusals: list[UpstreamRefusal] = []
        for upstream in self._pool.all():
            request, streamer, completer = self._request(upstream, messages, turn.options, turn.offer)
            await upstream.transport.prepare()  # a first request's set-up is not the upstream's first token
            key = upstream.key
            # (stream?, ask for usage with stream_options?) in the order to try them on this upstream
            paths = [(True, STREAM_SUPPORT.takes_usage_option(key)), (False, False)] \
                if stream and STREAM_SUPPORT.streams(key) else [(False, False)]
            stream_failure: BaseException | None = None
            while paths:
                streaming, include_usage = paths.pop(0)
                call = ModelCall()
                if streaming:
                    source = streamer(upstream, request, guard, call, timeouts.first_token, timeouts.stall,
                                      include_usage=include_usage)
                else:
                    source = completer(upstream.transport, request, guard, call, timeouts.first_token, timeouts.stall)
                source = upstream_call(source, call, upstream.endpoint.name)  # telemetry (as is when off)
                fresh = True
                need_separator = turn.has_content
                shown = sum(map(len, turn.committed))  # the turn's text so far, against model.max_reply_chars
                try:
                    async for event in source:
                        if fresh:
                            fresh = False
                            if turn.orphan is not None:
                                yield self._reset(turn)
                                if turn.committed:
                                    yield TextDelta("".join(turn.committed))
                        if type(event) is TextDelta:
                            if need_separator:
                                need_separator = False
                                call.separated = True
                                shown += len(turn.separator)
                                yield TextDelta(turn.separator)
                            shown += len(event.text)  # type: ignore[union-attr]
                            if shown > max_chars:
                                kept = _cut_last(call, event.text, shown - max_chars)  # type: ignore[union-attr]
                                if kept:
                                    yield TextDelta(kept)
                                raise ReplyCut
                        yield event
                except (Interrupted, ReplyCut):
                    turn.pending = call
                    raise
                except Exception as exc:
                    if streaming and include_usage and rejects_usage_option(exc):
                        STREAM_SUPPORT.mark_no_usage_option(key)  # stream again, without stream_options
                        paths.insert(0, (True, False))
                        continue
                    how = "stream" if streaming else "non-streaming call"
                    reason = describe(exc)
                    secrets = upstream.endpoint.secrets()
                    for secret in secrets:  # servers may echo the key or the URL
                        reason = redact(reason, secret)
                    failures.append(f"{upstream.label} ({how}): {reason}")
                    log.info("upstream %s %s failed: %s", upstream.label, how, reason)
                    refusal = refusal_of(exc, secrets) if stream_failure is None else None
                    if refusal is not None:  # (the first answer only: a replay's refusal is not why it failed)
                        refusals.append(refusal)
                    if refuses_the_request(exc):  # the same request fails the same way: no non-streamed replay
                        break
                    if call.text_parts:
                        turn.orphan = call
                    if streaming:
                        stream_failure = exc
                        if endpoint_is_down(exc):
                            break
                    continue
                finally:
                    await source.aclose()
                if turn.orphan is not None:
                    yield self._reset(turn)
                    if turn.committed:
                        yield TextDelta("".join(turn.committed))
                if stream_failure is not None and streaming_unsupported(stream_failure):
                    STREAM_SUPPORT.mark_not_streaming(key)
                    log.info("%s does not stream; using non-streaming calls for it for a while", upstream.label)
                if log.isEnabledFor(logging.DEBUG):  # its arguments cost more than the rest of the bookkeeping
                    log.debug("%s answered (%s): finish=%s, %d chars, %d tool calls, usage=%s", upstream.label,
                              "stream" if streaming else "non-streaming", call.finish_reason, len(call.text),
                              len(call.final_tool_calls()), call.usage)
                yield call
                return
        raise AllUpstreamsFailed(failures, refusals)

    @staticmethod
    def _reset(turn: _Turn) -> StreamReset:
        turn.orphan = None
        return StreamReset(reason="the stream failed part-way; replaced by a retry")

    async def _run_tools(self, guard: ReadGuard, calls: list[ToolCall], messages: list[dict[str, Any]],
                         new_messages: list[dict[str, Any]], media: list[Media], approver: Approver | None = None,
                         offer: GatewayOffer | None = None) -> AsyncGenerator[StreamEvent, None]:
        """Run the calls concurrently; report and record them (and collect their media) in call order.

        ``offer``: the tools the turn offered, by the names the model saw (None: all, under their own)."""
        tasks = [asyncio.ensure_future(tool_call(self._run_approved(call, approver, offer), call.name))
                 for call in calls]
        done = 0
        try:
            for call, task in zip(calls, tasks):
                outcome: ToolOutcome = await guard.wait(task, math.inf, f"tool {call.name}")
                done += 1
                message = outcome.as_message()  # the model (and the store) get the stand-ins, never bytes
                messages.append(message)
                new_messages.append(message)
                media.extend(outcome.media)
                yield ToolCallFinished(call_id=call.call_id, name=call.name, arguments=call.arguments,
                                       summary=outcome.summary, ok=outcome.ok)
        except Interrupted:
            self._skip_tools(calls[done:], "interrupted before the tool finished", messages, new_messages)
            raise
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()

    async def _run_approved(self, call: ToolCall, approver: Approver | None,
                            offer: GatewayOffer | None = None) -> ToolOutcome:
        """One call, once a person approved it when ``tools.approval`` says so (else the refusal)."""
        if offer is not None:
            tool = offer.tools.get(call.name)
            if tool is None:  # not offered this turn: reported like an unknown tool, never run
                return await run_tool(offer.tools, call)
            call = ToolCall(call.call_id, tool.name, call.arguments, call.index)  # approved and run as itself
        refused = await refusal(self.tools, call, approver)
        if refused is not None:
            return refused
        return await run_tool(self.tools, call, self.tool_timeout, self.media_directory)

    @staticmethod
    def _skip_tools(calls: list[ToolCall], why: str, messages: list[dict[str, Any]],
                    new_messages: list[dict[str, Any]]) -> None:
        # Every tool call needs a result message, or the next request is invalid.
        for call in calls:
            message = {"role": "tool", "tool_call_id": call.call_id, "content": f"Error: {why}."}
            messages.append(message)
            new_messages.append(message)


def _cut_last(call: ModelCall, text: str, over: int) -> str:
    """The start of ``text`` (the call's last delta) without its last ``over`` characters, the call's text cut
    the same way."""
    kept = text[:max(0, len(text) - over)]
    parts = call.text_parts
    if parts and parts[-1] is text:
        if kept:
            parts[-1] = kept
        else:
            parts.pop()
    return kept


_warned_callbacks: set[int] = set()


def _tally(names: Sequence[str]) -> str:
    """``calculate x21, current_time`` for the log."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if n == 1 else f"{name} x{n}" for name, n in counts.items())


def _call_back(callback: StreamCallback, value: str | None) -> None:
    try:
        callback(value)
    except Exception as exc:  # a consumer's bug must not break the turn
        if id(callback) not in _warned_callbacks:
            _warned_callbacks.add(id(callback))
            log.warning("stream_callback raised %s: %s (further errors from it are ignored)",
                        type(exc).__name__, exc)
