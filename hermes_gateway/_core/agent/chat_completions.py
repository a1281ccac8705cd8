"""Chat Completions: one upstream call, streamed or not, filling a :class:`ModelCall`.

Both functions are async generators of events (text deltas, tool call
starts) so the tool loop has one path whichever way the answer came.
Streaming asks for ``stream_options.include_usage`` and reassembles tool
calls by ``index``; a stream that ends without a ``finish_reason`` (dropped
connection, no ``[DONE]``) is an :class:`IncompleteStream`, not an answer.
The SDK makes the streamed request; its body is read by :mod:`.sse` as
plain JSON (the SDK's pydantic chunks cost ~95 us of CPU per delta).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator

import openai
from openai._constants import RAW_RESPONSE_HEADER
from openai.types.chat import ChatCompletion

from ..events import StreamEvent, TextDelta
from .errors import IncompleteStream, MalformedChunk, NotStreaming
from .guard import ReadGuard, UpstreamTimeout
from .results import ModelCall, ToolCall, usage_from
from .sse import SSEPayloads

if TYPE_CHECKING:
    from .upstream import Upstream

#: After ``finish_reason`` only the usage chunk and ``[DONE]`` remain; don't wait a full stall for them.
TAIL_TIMEOUT = 1.0
TAIL_WHAT = "end of stream after the finish"


#: What ``with_streaming_response.create`` asks of the SDK: the raw response, the bearer key.
_STREAM_OPTIONS: Any = {"headers": {RAW_RESPONSE_HEADER: "stream"}, "security": {"bearer_auth": True}}
_CALL_OPTIONS: Any = {"security": {"bearer_auth": True}}


async def open_stream(client: openai.AsyncOpenAI, path: str, body: dict[str, Any]) -> Any:
    """Make a streamed request through the SDK's client (retries, auth, error mapping); the raw HTTP response.

    ``client.post`` rather than ``client.chat.completions.create``: the typed
    method first converts the body element by element against its TypedDicts
    (``openai._utils._transform``), ~140 us per message, which froze the event
    loop for seconds on a request of 20,000 tiny messages (issue 13) and is
    most of the SDK's ~1.3 ms per request. The body the agent builds is
    already plain JSON. A coroutine of its own so that a request never
    started (interrupted before it) leaves no un-awaited SDK coroutine behind.
    """
    api_response = await client.post(path, body=body, cast_to=object, options=_STREAM_OPTIONS, stream=True,
                                     stream_cls=openai.AsyncStream[Any])
    return api_response.http_response


async def post_call(client: openai.AsyncOpenAI, path: str, body: dict[str, Any], cast_to: Any) -> Any:
    """A non-streaming call, parsed into ``cast_to`` by the SDK (without the per-element transform)."""
    return await client.post(path, body=body, cast_to=cast_to, options=_CALL_OPTIONS)


async def stream_chat(upstream: "Upstream", request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                      first_token: float, stall: float, include_usage: bool = True) -> AsyncIterator[StreamEvent]:
    """Stream one answer. ``upstream.open_stream`` makes the request with the SDK's headers, retries and
    errors (:mod:`.stream_request`); the body is read as plain JSON by :class:`SSEPayloads`, not as
    pydantic chunks, which is most of the CPU per delta."""
    loop = guard.loop
    first_deadline = loop.time() + first_token
    options = {"stream_options": {"include_usage": True}} if include_usage else {}
    response = await guard.wait(upstream.open_stream("/chat/completions", {**request, "stream": True, **options}),
                                first_deadline, f"first token within {first_token:g} s")
    payloads = SSEPayloads(response)
    try:
        content_type = payloads.response.headers.get("content-type", "")
        if "event-stream" not in content_type:
            raise NotStreaming(f"asked for a stream, got {content_type or 'no content type'}")
        next_chunk = payloads.next
        enter = guard.enter
        parts = call.text_parts
        tools = call.tools
        first_what = f"first token within {first_token:g} s"
        stall_what = f"next chunk within {stall:g} s (stalled)"
        while True:
            if call.finish_reason is not None:
                deadline, what = loop.time() + min(stall, TAIL_TIMEOUT), TAIL_WHAT
            elif call.got_content:
                deadline, what = loop.time() + stall, stall_what
            else:
                deadline, what = first_deadline, first_what
            # guard.wait() inlined: this runs once per chunk, and one coroutine less is ~0.6 us.
            enter(deadline, what)
            try:
                chunk = await next_chunk()
            except StopAsyncIteration:
                guard.active = False
                break
            except asyncio.CancelledError:
                guard.active = False
                error = guard.cut_error()
                if error is None:
                    raise
                if isinstance(error, UpstreamTimeout) and call.finish_reason is not None:
                    break  # the answer is complete; only the tail (usage, [DONE]) went missing
                raise error from None
            except openai.APIConnectionError:
                guard.active = False
                if call.finish_reason is not None:
                    break
                raise
            except BaseException:
                guard.active = False
                raise
            guard.active = False
            try:
                usage = chunk.get("usage")
                if usage is not None:
                    call.usage = usage_from(usage)
                choices = chunk.get("choices")
                if not choices:
                    continue
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    content = delta.get("content")
                    if content:
                        if type(content) is not str:
                            raise TypeError(f"content is {type(content).__name__}, not a string")
                        call.got_content = True
                        parts.append(content)
                        yield TextDelta(content)
                    tool_deltas = delta.get("tool_calls")
                    if tool_deltas:
                        call.got_content = True
                        for started in tools.add_chat_delta_dicts(tool_deltas):
                            yield started
                finish_reason = choice.get("finish_reason")
                if finish_reason:
                    call.finish_reason = finish_reason
            except (AttributeError, TypeError, KeyError, ValueError) as exc:
                raise MalformedChunk(f"a chunk of unexpected shape ({type(exc).__name__}: {exc})") from None
    except openai.APIConnectionError as exc:
        exc._hermes_mid_stream = True  # type: ignore[attr-defined]
        raise
    finally:
        await payloads.aclose()
    if call.finish_reason is None:
        raise IncompleteStream("the stream ended before the model finished (no finish_reason)")


async def complete_chat(client: openai.AsyncOpenAI, request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                        first_token: float, stall: float) -> AsyncIterator[StreamEvent]:
    deadline = guard.loop.time() + first_token + stall
    response = await guard.wait(post_call(client, "/chat/completions", request, ChatCompletion), deadline,
                                f"response within {first_token + stall:g} s")
    if not response.choices:
        raise IncompleteStream("the upstream answered with no choices")
    choice = response.choices[0]
    message = choice.message
    call.usage = usage_from(response.usage)
    call.finish_reason = choice.finish_reason or "stop"
    calls = []
    for index, tc in enumerate(message.tool_calls or ()):
        function = getattr(tc, "function", None)
        if function is None or not function.name:
            continue
        calls.append(ToolCall(tc.id or f"call_{index}", function.name, function.arguments or "", index))
    call.tool_calls = calls
    if message.content:
        call.got_content = True
        call.text_parts.append(message.content)
        yield TextDelta(message.content)
    for tc in calls:
        slot = call.tools.slot(tc.index)
        slot.call_id, slot.name = tc.call_id, tc.name
        yield call.tools.announce(slot)
