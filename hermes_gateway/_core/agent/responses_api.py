"""Responses API mode (``model.api_mode: responses``): one upstream call, streamed or not.

The conversation is kept as Chat Completions messages everywhere else;
this module translates them into Responses ``input`` items, and streamed
``response.output_text.delta`` / function-call events back into the same
events and :class:`ModelCall` the Chat Completions path produces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Sequence

from ..events import StreamEvent, TextDelta, ToolCallArguments
from .chat_completions import TAIL_TIMEOUT, TAIL_WHAT
from .errors import (IncompleteStream, MalformedChunk, MalformedResponse, NotStreaming, UpstreamConnectionError,
                     UpstreamError)
from .guard import ReadGuard, UpstreamTimeout
from .results import ModelCall, ToolCall, text_field, usage_from
from .transport import RESPONSES_PATH, UpstreamTransport

if TYPE_CHECKING:
    from .upstream import Upstream


def to_responses_input(messages: Sequence[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """(instructions, input items) for a list of Chat Completions messages."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system" and not items:
            instructions.append(content if isinstance(content, str) else str(content))
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id"),
                          "output": content if isinstance(content, str) else str(content)})
        else:
            if content:
                items.append({"role": role, "content": responses_content(content, role)})
            for tc in message.get("tool_calls") or ():
                function = tc.get("function") or {}
                items.append({"type": "function_call", "call_id": tc.get("id"), "name": function.get("name"),
                              "arguments": function.get("arguments", "")})
    return ("\n\n".join(instructions) or None), items


def responses_content(content: Any, role: Any) -> Any:
    """Chat Completions content as Responses content: text as is, parts as ``input_text`` /
    ``output_text`` and ``input_image`` parts."""
    if not isinstance(content, list):
        return content
    text_type = "output_text" if role == "assistant" else "input_text"
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append({"type": text_type, "text": part.get("text", "")})
        elif kind == "image_url":
            image = part.get("image_url") or {}
            parts.append({"type": "input_image", "image_url": image.get("url"), "detail": image.get("detail", "auto")})
        else:
            parts.append(part)
    return parts


def build_request(model: str, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    instructions, items = to_responses_input(messages)
    request: dict[str, Any] = {"model": model, "input": items}
    if instructions:
        request["instructions"] = instructions
    if tools:
        request["tools"] = tools
    return request


async def stream_responses(upstream: "Upstream", request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                           first_token: float, stall: float, include_usage: bool = True) -> AsyncIterator[StreamEvent]:
    """Stream one answer; as in ``stream_chat`` ``upstream.transport`` makes the request and yields the
    events as plain JSON."""
    # include_usage is a Chat Completions option; the Responses API always reports usage at the end.
    loop = guard.loop
    first_deadline = loop.time() + first_token
    payloads = await guard.wait(upstream.transport.open_stream(RESPONSES_PATH, {**request, "stream": True}),
                                first_deadline, f"first token within {first_token:g} s")
    try:
        content_type = payloads.content_type
        if "event-stream" not in content_type:
            raise NotStreaming(f"asked for a stream, got {content_type or 'no content type'}")
        next_event = payloads.next
        wait = guard.wait
        parts = call.text_parts
        tools = call.tools
        first_what = f"first token within {first_token:g} s"
        stall_what = f"next event within {stall:g} s (stalled)"
        while True:
            if call.finish_reason is not None:
                deadline, what = loop.time() + min(stall, TAIL_TIMEOUT), TAIL_WHAT
            elif call.got_content:
                deadline, what = loop.time() + stall, stall_what
            else:
                deadline, what = first_deadline, first_what
            try:
                event = await wait(next_event(), deadline, what)
            except StopAsyncIteration:
                break
            except (UpstreamTimeout, UpstreamConnectionError):
                if call.finish_reason is not None:
                    break
                raise
            try:
                kind = event.get("type")
                if kind == "response.output_text.delta":
                    delta = event.get("delta")
                    if delta:
                        call.got_content = True
                        parts.append(text_field(delta, "text delta"))
                        yield TextDelta(delta)
                elif kind == "response.function_call_arguments.delta":
                    slot = tools.slot(event.get("output_index"), dense=True)
                    piece = text_field(event.get("delta") or "", "tool arguments")
                    tools.add_arguments(slot, piece)
                    if piece and slot.announced:
                        yield ToolCallArguments(slot.call_id, slot.index, piece)
                elif kind in ("response.output_item.added", "response.output_item.done"):
                    item = event.get("item")
                    if item is not None and item.get("type") == "function_call":
                        call.got_content = True
                        slot = tools.slot(event.get("output_index"), dense=True)
                        slot.call_id = slot.call_id or text_field(item.get("call_id") or "", "tool call id")
                        slot.name = slot.name or text_field(item.get("name") or "", "tool name")
                        arguments = item.get("arguments")
                        if kind == "response.output_item.done" and arguments is not None:
                            slot.arguments[:] = [text_field(arguments, "tool arguments")]
                        elif arguments and not slot.arguments:
                            tools.add_arguments(slot, text_field(arguments, "tool arguments"))
                        if slot.name and not slot.announced:
                            yield tools.announce(slot)
                            if slot.arguments and kind == "response.output_item.added":
                                yield ToolCallArguments(slot.call_id, slot.index, "".join(slot.arguments))
                elif kind == "response.function_call_arguments.done":
                    slot = tools.slot(event.get("output_index"), dense=True)
                    arguments = event.get("arguments")
                    if arguments is not None:
                        slot.arguments[:] = [text_field(arguments, "tool arguments")]
                elif kind in ("response.completed", "response.incomplete"):
                    completed = event.get("response")
                    call.usage = usage_from(completed.get("usage") if completed is not None else None)
                    call.finish_reason = "tool_calls" if tools else "stop"
                    if kind == "response.incomplete":
                        call.finish_reason = "length"
                elif kind in ("response.failed", "error"):
                    raise UpstreamError(_event_error(event))
            except (AttributeError, TypeError, KeyError, ValueError) as exc:
                raise MalformedChunk(f"an event of unexpected shape ({type(exc).__name__}: {exc})") from None
    except UpstreamConnectionError as exc:
        exc.mid_stream = True
        raise
    finally:
        await payloads.aclose()
    if call.finish_reason is None:
        raise IncompleteStream("the stream ended before response.completed")


async def complete_responses(transport: UpstreamTransport, request: dict[str, Any], guard: ReadGuard,
                             call: ModelCall, first_token: float, stall: float) -> AsyncIterator[StreamEvent]:
    deadline = guard.loop.time() + first_token + stall
    response = await guard.wait(transport.call(RESPONSES_PATH, request), deadline,
                                f"response within {first_token + stall:g} s")
    if response.get("status", "completed") == "failed":
        raise UpstreamError(_event_error(response))
    text: list[str] = []
    calls: list[ToolCall] = []
    try:
        call.usage = usage_from(response.get("usage"))
        for item in response.get("output") or ():
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content") or ():
                    if part.get("type") == "output_text":
                        text.append(text_field(part.get("text"), "output text"))
            elif kind == "function_call":
                calls.append(ToolCall(text_field(item.get("call_id") or f"call_{len(calls)}", "tool call id"),
                                      text_field(item.get("name"), "tool name"),
                                      text_field(item.get("arguments") or "", "tool arguments"), len(calls)))
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise MalformedResponse(f"an answer of unexpected shape ({type(exc).__name__}: {exc})") from None
    call.tool_calls = calls
    call.finish_reason = "tool_calls" if calls else "stop"
    if getattr(response, "status", None) == "incomplete":
        call.finish_reason = "length"
    joined = "".join(text)
    if joined:
        call.got_content = True
        call.text_parts.append(joined)
        yield TextDelta(joined)
    for tc in calls:
        slot = call.tools.slot(tc.index, dense=True)
        slot.call_id, slot.name = tc.call_id, tc.name
        yield call.tools.announce(slot)


def _event_error(event: Any) -> str:
    """The message of an ``error`` / ``response.failed`` event or a failed response (model or JSON)."""
    error = _field(event, "error")
    response = _field(event, "response")
    if error is None and response is not None:
        error = _field(response, "error")
    message = _field(error, "message") or _field(event, "message")
    return str(message or "the upstream reported a failure")


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)
