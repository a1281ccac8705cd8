"""Responses API mode (``model.api_mode: responses``): one upstream call, streamed or not.

The conversation is kept as Chat Completions messages everywhere else;
this module translates them into Responses ``input`` items, and streamed
``response.output_text.delta`` / function-call events back into the same
events and :class:`ModelCall` the Chat Completions path produces.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Sequence

import openai

from ..events import StreamEvent, TextDelta
from .chat_completions import TAIL_TIMEOUT, TAIL_WHAT
from .errors import IncompleteStream, NotStreaming, UpstreamError
from .guard import ReadGuard, UpstreamTimeout
from .results import ModelCall, ToolCall, usage_from


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
                items.append({"role": role, "content": content})
            for tc in message.get("tool_calls") or ():
                function = tc.get("function") or {}
                items.append({"type": "function_call", "call_id": tc.get("id"), "name": function.get("name"),
                              "arguments": function.get("arguments", "")})
    return ("\n\n".join(instructions) or None), items


def build_request(model: str, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    instructions, items = to_responses_input(messages)
    request: dict[str, Any] = {"model": model, "input": items}
    if instructions:
        request["instructions"] = instructions
    if tools:
        request["tools"] = tools
    return request


async def stream_responses(client: openai.AsyncOpenAI, request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                           first_token: float, stall: float, include_usage: bool = True) -> AsyncIterator[StreamEvent]:
    # include_usage is a Chat Completions option; the Responses API always reports usage at the end.
    loop = guard.loop
    first_deadline = loop.time() + first_token
    stream = await guard.wait(client.responses.create(**request, stream=True), first_deadline,
                              f"first token within {first_token:g} s")
    try:
        content_type = stream.response.headers.get("content-type", "")
        if "event-stream" not in content_type:
            raise NotStreaming(f"asked for a stream, got {content_type or 'no content type'}")
        next_event = stream.__anext__
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
            except (UpstreamTimeout, openai.APIConnectionError):
                if call.finish_reason is not None:
                    break
                raise
            kind = event.type
            if kind == "response.output_text.delta":
                if event.delta:
                    call.got_content = True
                    parts.append(event.delta)
                    yield TextDelta(event.delta)
            elif kind == "response.function_call_arguments.delta":
                slot = tools.slot(event.output_index, dense=True)
                slot.arguments.append(event.delta or "")
            elif kind in ("response.output_item.added", "response.output_item.done"):
                item = event.item
                if getattr(item, "type", None) == "function_call":
                    call.got_content = True
                    slot = tools.slot(event.output_index, dense=True)
                    slot.call_id = slot.call_id or item.call_id
                    slot.name = slot.name or item.name
                    if kind == "response.output_item.done" and item.arguments is not None:
                        slot.arguments[:] = [item.arguments]
                    elif item.arguments and not slot.arguments:
                        slot.arguments.append(item.arguments)
                    if slot.name and not slot.announced:
                        yield tools.announce(slot)
            elif kind == "response.function_call_arguments.done":
                slot = tools.slot(event.output_index, dense=True)
                if event.arguments is not None:
                    slot.arguments[:] = [event.arguments]
            elif kind in ("response.completed", "response.incomplete"):
                call.usage = usage_from(getattr(event.response, "usage", None))
                call.finish_reason = "tool_calls" if tools else "stop"
                if kind == "response.incomplete":
                    call.finish_reason = "length"
            elif kind in ("response.failed", "error"):
                raise UpstreamError(_event_error(event))
    except openai.APIConnectionError as exc:
        exc._hermes_mid_stream = True  # type: ignore[attr-defined]
        raise
    finally:
        await stream.close()
    if call.finish_reason is None:
        raise IncompleteStream("the stream ended before response.completed")


async def complete_responses(client: openai.AsyncOpenAI, request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                             first_token: float, stall: float) -> AsyncIterator[StreamEvent]:
    deadline = guard.loop.time() + first_token + stall
    response = await guard.wait(client.responses.create(**request), deadline,
                                f"response within {first_token + stall:g} s")
    if getattr(response, "status", "completed") == "failed":
        raise UpstreamError(_event_error(response))
    call.usage = usage_from(response.usage)
    text: list[str] = []
    calls: list[ToolCall] = []
    for item in response.output or ():
        if item.type == "message":
            for part in item.content or ():
                if getattr(part, "type", None) == "output_text":
                    text.append(part.text)
        elif item.type == "function_call":
            calls.append(ToolCall(item.call_id, item.name, item.arguments or "", len(calls)))
    call.tool_calls = calls
    call.finish_reason = "tool_calls" if calls else "stop"
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
    error = getattr(event, "error", None)
    if error is None and getattr(event, "response", None) is not None:
        error = getattr(event.response, "error", None)
    message = getattr(error, "message", None) or getattr(event, "message", None)
    return str(message or "the upstream reported a failure")
