"""Chat Completions SSE: ``data: <chunk>`` frames exactly as OpenAI clients parse them.

Order on the wire: one role chunk; content (and ``reasoning_content``)
chunks, one per agent delta, written before the agent next waits for
anything (deltas that were ready together share one write, see
:mod:`.coalesce`; none waits for a later token); one chunk
with ``finish_reason`` (``tool_calls`` after the client's own tool calls,
streamed as ``delta.tool_calls`` pieces the moment the upstream writes them
(:mod:`.tool_stream`): ``index``, ``id``, ``type`` and ``function.name``
once, then each piece of the arguments; ``length`` after a cut by a
token limit); a usage chunk with ``"choices": []`` when the client
asked for ``stream_options.include_usage``; then ``data: [DONE]`` exactly
once, last. A failure after the stream started is ``data: {"error": ...}``
followed by ``[DONE]`` (the SDK raises ``APIError`` on it).

Content chunks are built from a prefix and suffix rendered once per stream,
so the per-delta cost is one JSON string literal of the text (``sse.json_string``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import AsyncIterator, Awaitable, Callable, Sequence

from ..events import (StreamEvent, StreamReset, TextDelta, ToolCallArguments, ToolCallFinished, ToolCallStarted,
                      TurnEnd, UsageReport)
from ..media import Media
from ..http.errors import ApiError
from .media import RenderedMedia
from .outcome import INTERNAL, STREAM_RESET, Outcome, classify_end, refusal_error, total_usage
from .progress import tool_progress_frame
from .reply_text import Diverged, ReplyText
from .coalesce import MAX_COALESCED, Frames, next_event
from .sse import DONE, SSEWriter, data_frame, dumps, json_string
from .tool_stream import StreamedCall, StreamedCalls

log = logging.getLogger(__name__)


class ChatChunks:
    """Renders the chunks of one completion (fixed id, created, model).

    Every chunk is rendered from text fixed once per stream (the same bytes
    ``data_frame`` would give): one JSON string literal per content delta, none for
    the role, finish and usage chunks.
    """

    def __init__(self, completion_id: str, model: str, created: int | None = None) -> None:
        self.completion_id = completion_id
        self.model = model
        self.created = int(time.time()) if created is None else created
        self._base = (f'data: {{"id":{dumps(completion_id)},"object":"chat.completion.chunk",'
                      f'"created":{self.created},"model":{dumps(model)},')
        head = self._base + '"choices":[{"index":0,"delta":{'
        tail = '},"logprobs":null,"finish_reason":null}]}\n\n'
        self._content = (head + '"content":', tail)
        self._reasoning = (head + '"reasoning_content":', tail)

    def role(self) -> bytes:
        return (self._base + '"choices":[{"index":0,"delta":{"role":"assistant","content":""},'
                '"logprobs":null,"finish_reason":null}]}\n\n').encode()

    def content(self, text: str) -> str:
        return self._content[0] + json_string(text) + self._content[1]

    @property
    def content_template(self) -> tuple[str, str]:
        """What comes before and after a content delta's JSON string literal (:meth:`content`'s pieces)."""
        return self._content

    def reasoning(self, text: str) -> str:
        return self._reasoning[0] + json_string(text) + self._reasoning[1]

    def call_start(self, call: StreamedCall) -> bytes:
        """A client tool call's first delta, as OpenAI streams it: index, id, type and name (arguments "")."""
        return self._delta({"tool_calls": [{"index": call.index, "id": call.call_id, "type": "function",
                                            "function": {"name": call.name, "arguments": ""}}]})

    def call_arguments(self, call: StreamedCall, piece: str) -> bytes:
        """A piece of a client tool call's arguments."""
        return self._delta({"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]})

    def _delta(self, delta: dict) -> bytes:
        return (self._base + '"choices":[{"index":0,"delta":' + dumps(delta)
                + ',"logprobs":null,"finish_reason":null}]}\n\n').encode()

    def progress(self, event: ToolCallStarted | ToolCallFinished) -> bytes:
        return tool_progress_frame(event)

    def finish(self, reason: str = "stop") -> bytes:
        return (self._base + '"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":'
                + dumps(reason) + '}]}\n\n').encode()

    def usage(self, usage: UsageReport) -> bytes:
        return (self._base + f'"choices":[],"usage":{{"prompt_tokens":{dumps(usage.prompt_tokens)},'
                f'"completion_tokens":{dumps(usage.completion_tokens)},'
                f'"total_tokens":{dumps(usage.total_tokens)}}}}}\n\n').encode()


async def write_chat_stream(sse: SSEWriter, events: AsyncIterator[StreamEvent], chunks: ChatChunks, *,
                            include_usage: bool, tool_progress: bool,
                            on_text: Callable[[int], None], shutting_down: Callable[[], bool],
                            starts_open: bool = False, expose_reasoning: bool = False,
                            render_media: Callable[[Sequence[Media]], Awaitable[RenderedMedia]] | None = None,
                            verbatim: bool = False, client_tools: frozenset[str] = frozenset(),
                            hold: float = 0.0) -> Outcome:
    """Relay ``events`` to ``sse`` until the turn ends; return what the client got.

    ``on_text(n)`` is called after each write that carried text (``n`` events),
    for the metrics. Reasoning goes out as ``reasoning_content`` only with
    ``expose_reasoning`` (``api_server.expose_reasoning``). Cancellation (the
    client went away) propagates after the agent's iterator is closed, which
    closes the upstream request.
    ``starts_open`` is ``model.reasoning_starts_open`` (replies open inside reasoning).
    ``render_media`` turns the turn's media into Markdown lines, sent as one
    last content chunk after the reply's text. ``verbatim``: the client asked for JSON; the text goes out
    unfiltered. ``client_tools``: the client's own tools, whose calls stream to the client (not the gateway's
    progress). ``hold``: seconds the role chunk (and the response's status) waits for the agent's first event
    (:meth:`.coalesce.Frames.hold`), so an upstream's refusal is answered with its own status (:class:`ApiError`
    raised, nothing written).
    """
    outcome = Outcome()
    reply = ReplyText(starts_open=starts_open, verbatim=verbatim)
    reports: list[UsageReport] = []
    end: TurnEnd | None = None
    out = Frames(sse, on_text)
    out.add(chunks.role())
    out.hold(hold)
    calls = StreamedCalls(client_tools)
    refused: ApiError | None = None
    content_head, content_tail = chunks.content_template
    try:
        try:  # closing the agent's iterator closes the upstream request (as contextlib.aclosing, a frame less)
            anext = events.__anext__
            while True:
                try:  # written before the agent waits for anything (coalesce.py)
                    event = await next_event(anext, out.flush_before_wait if out.frames else None)
                except StopAsyncIteration:
                    break
                if out.held:
                    out.release()
                if type(event) is TextDelta:
                    reasoning, visible = reply.feed(event.text)
                    if not expose_reasoning:
                        reasoning = ""
                    if visible and not reasoning:  # out.add(chunks.content(visible), 1), inlined: once per delta
                        out.frames.append(content_head + json_string(visible) + content_tail)
                        out.texts += 1
                    elif reasoning or visible:
                        _add_pieces(out, chunks, reasoning, visible)
                    if len(out.frames) >= MAX_COALESCED:
                        await out.flush()
                elif isinstance(event, TurnEnd):
                    end = event
                    break
                elif isinstance(event, UsageReport):
                    reports.append(event)
                elif type(event) is ToolCallArguments:
                    call = calls.piece(event)
                    if call is not None:
                        out.add(chunks.call_arguments(call, event.delta))
                elif isinstance(event, StreamReset):
                    reply.reset()
                    calls.reset()
                elif isinstance(event, (ToolCallStarted, ToolCallFinished)):
                    if event.name in client_tools:
                        call = calls.started(event) if isinstance(event, ToolCallStarted) else None
                        if call is not None:
                            out.add(chunks.call_start(call))
                    elif tool_progress:
                        out.add(chunks.progress(event))
        finally:
            await events.aclose()  # type: ignore[attr-defined]
        code, message = classify_end(end, shutting_down())
        if code is not None and not out.wrote:
            refused = refusal_error(end)
        if code is None:
            reasoning, visible = reply.finish()
            if not expose_reasoning:
                reasoning = ""
            _add_pieces(out, chunks, reasoning, visible)
            if end is not None and end.media and render_media is not None:
                _add_pieces(out, chunks, "", (await render_media(end.media)).tail(reply.sent))
        else:
            outcome.fail(code, message, refusal_error(end))
    except Diverged as exc:
        log.warning("chat completion %s: %s; ending the stream with an error", chunks.completion_id, exc)
        outcome.fail(STREAM_RESET)
    except (asyncio.CancelledError, ConnectionError):
        raise
    except Exception:
        log.exception("chat completion %s: the agent failed", chunks.completion_id)
        outcome.fail(INTERNAL)
    finally:
        out.close()
    if refused is not None:
        raise refused  # nothing was written: the client gets the upstream's status (routes.py)
    outcome.text, outcome.reasoning, outcome.end = reply.sent, reply.reasoning_sent, end
    outcome.usage = total_usage(reports, end)
    tail = b""
    if outcome.ok:
        assert end is not None
        try:
            calls.leftover(end.tool_calls, end.finish_reason == "length")
            for call, rest, new in calls.finish(end.tool_calls):
                if new:
                    tail += chunks.call_start(call)
                if rest:
                    tail += chunks.call_arguments(call, rest)
        except Diverged as exc:
            log.warning("chat completion %s: %s; ending the stream with an error", chunks.completion_id, exc)
            outcome.fail(STREAM_RESET)
    if outcome.ok:
        assert end is not None
        tail += chunks.finish(end.finish_reason)
        if include_usage:
            tail += chunks.usage(outcome.usage)
    else:
        tail = data_frame({"error": outcome.error_fields()})
    await out.end(tail + DONE)  # what is left, the tail and the end of the body, in one send
    return outcome


def _add_pieces(out: Frames, chunks: ChatChunks, reasoning: str, visible: str) -> None:
    if reasoning:
        out.add(chunks.reasoning(reasoning), 1)
    if visible:
        out.add(chunks.content(visible), 1)
