"""Chat Completions: one upstream call, streamed or not, filling a :class:`ModelCall`.

Both functions are async generators of events (text deltas, tool call
starts) so the tool loop has one path whichever way the answer came.
Streaming asks for ``stream_options.include_usage`` and reassembles tool
calls by ``index``; a stream that ends without a ``finish_reason`` (dropped
connection, no ``[DONE]``) is an :class:`IncompleteStream`, not an answer.
The upstream's transport (:mod:`.transport`) makes the request and hands
back plain JSON, whichever transport it is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator

from ..events import StreamEvent, TextDelta
from .errors import IncompleteStream, MalformedChunk, MalformedResponse, NotStreaming, UpstreamConnectionError
from .guard import ReadGuard, UpstreamTimeout
from .read_batching import READ_BATCH
from .results import ModelCall, ToolCall, text_field, usage_from
from .transport import CHAT_PATH, UpstreamTransport

if TYPE_CHECKING:
    from .upstream import Upstream

#: After ``finish_reason`` only the usage chunk and ``[DONE]`` remain; don't wait a full stall for them.
TAIL_TIMEOUT = 1.0
TAIL_WHAT = "end of stream after the finish"


async def stream_chat(upstream: "Upstream", request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                      first_token: float, stall: float, include_usage: bool = True) -> AsyncIterator[StreamEvent]:
    """Stream one answer; ``upstream.transport`` makes the request (with retries) and yields plain JSON chunks."""
    loop = guard.loop
    first_deadline = loop.time() + first_token
    options = {"stream_options": {"include_usage": True}} if include_usage else {}
    payloads = await guard.wait(upstream.transport.open_stream(CHAT_PATH, {**request, "stream": True, **options}),
                                first_deadline, f"first token within {first_token:g} s")
    try:
        content_type = payloads.content_type
        if "event-stream" not in content_type:
            raise NotStreaming(f"asked for a stream, got {content_type or 'no content type'}")
        next_chunk = payloads.next
        enter = guard.enter
        parts = call.text_parts
        tools = call.tools
        first_what = f"first token within {first_token:g} s"
        stall_what = f"next chunk within {stall:g} s (stalled)"
        # Payloads already decoded (one network read often holds many chunks) are taken without a wait,
        # so without the guard: no deadline can pass and no read can be cut while none is awaited.
        ready = getattr(payloads, "ready", ())
        yield_texts = getattr(payloads, "yield_texts", None)
        if yield_texts is not None:
            yield_texts()  # plain text chunks come as str (SSEPayloads)
        # a chat reply's reads are batched once it has its min_tokens (read_batching): from then on the texts read
        # together go on as one delta (not before: the delivery counts deltas towards streaming.min_tokens)
        batch = READ_BATCH.get()
        while True:
            if ready and not guard.interrupted:
                chunk = ready.popleft()
            else:
                if call.finish_reason is not None:
                    deadline, what = loop.time() + min(stall, TAIL_TIMEOUT), TAIL_WHAT
                elif call.got_content:
                    deadline, what = loop.time() + stall, stall_what
                else:
                    deadline, what = first_deadline, first_what
                # guard.wait() inlined: this runs once per read, and one coroutine less is ~0.6 us.
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
                except UpstreamConnectionError:
                    guard.active = False
                    if call.finish_reason is not None:
                        break
                    raise
                except BaseException:
                    guard.active = False
                    raise
                guard.active = False
            if type(chunk) is str:  # a plain text chunk (yield_texts)
                if batch is not None and batch.seconds:
                    while ready and type(ready[0]) is str:
                        chunk += ready.popleft()
                if chunk:
                    call.got_content = True
                    parts.append(chunk)
                    yield TextDelta(chunk)
                continue
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
                        for tool_event in tools.add_chat_delta_dicts(tool_deltas):
                            yield tool_event
                finish_reason = choice.get("finish_reason")
                if finish_reason:
                    call.finish_reason = finish_reason
            except (AttributeError, TypeError, KeyError, ValueError) as exc:
                raise MalformedChunk(f"a chunk of unexpected shape ({type(exc).__name__}: {exc})") from None
    except UpstreamConnectionError as exc:
        exc.mid_stream = True
        raise
    finally:
        await payloads.aclose()
    if call.finish_reason is None:
        raise IncompleteStream("the stream ended before the model finished (no finish_reason)")


async def complete_chat(transport: UpstreamTransport, request: dict[str, Any], guard: ReadGuard, call: ModelCall,
                        first_token: float, stall: float) -> AsyncIterator[StreamEvent]:
    deadline = guard.loop.time() + first_token + stall
    response = await guard.wait(transport.call(CHAT_PATH, request), deadline,
                                f"response within {first_token + stall:g} s")
    try:
        choices = response.get("choices")
        if not choices:
            raise IncompleteStream("the upstream answered with no choices")
        choice = choices[0]
        message = choice.get("message") or {}
        call.usage = usage_from(response.get("usage"))
        call.finish_reason = choice.get("finish_reason") or "stop"
        calls = []
        for index, tc in enumerate(message.get("tool_calls") or ()):
            function = tc.get("function")
            if not function or not function.get("name"):
                continue
            calls.append(ToolCall(text_field(tc.get("id") or f"call_{index}", "tool call id"),
                                  text_field(function["name"], "tool name"),
                                  text_field(function.get("arguments") or "", "tool arguments"), index))
        content = message.get("content")
        if content:
            text_field(content, "content")
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise MalformedResponse(f"an answer of unexpected shape ({type(exc).__name__}: {exc})") from None
    call.tool_calls = calls
    if content:
        call.got_content = True
        call.text_parts.append(content)
        yield TextDelta(content)
    for tc in calls:
        slot = call.tools.slot(tc.index)
        slot.call_id, slot.name = tc.call_id, tc.name
        yield call.tools.announce(slot)
