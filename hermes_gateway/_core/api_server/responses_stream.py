"""Responses API SSE: ``event: <type>`` + ``data: <json>``, ``sequence_number`` 0, 1, 2, … on every event.

Order on the wire: ``response.created``, ``response.in_progress``; at the
first text ``response.output_item.added`` (a message) and
``response.content_part.added``; one ``response.output_text.delta`` per
agent delta; then ``output_text.done``, ``content_part.done``,
``output_item.done``; each call of the client's own tools is a
``function_call`` item, added the moment its name is known, with a
``function_call_arguments.delta`` per piece the upstream writes
(:mod:`.tool_stream`), its ``.done`` and ``output_item.done`` at the end
(``output_index`` counts items in the order they were added); then
``response.completed`` (``response.incomplete`` with
``incomplete_details.reason: "max_output_tokens"`` after a cut by the
token limit). A failure after the stream
started closes the open item as ``incomplete`` and ends with
``response.failed`` (the SDK's ``get_final_response()`` then raises).
Reasoning (``<think>`` blocks) is not sent here: the gateway has no
reasoning-item summary to offer, and raw thoughts are not the reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence

from ..agent.options import NO_OPTIONS, TurnOptions, flat_tool

from ..events import (StreamEvent, StreamReset, TextDelta, ToolCallArguments, ToolCallFinished, ToolCallStarted,
                      TurnEnd, UsageReport)
from ..http.errors import ApiError
from ..media import Media
from .coalesce import MAX_COALESCED, Frames, next_event
from .media import RenderedMedia
from .outcome import INTERNAL, STREAM_RESET, Outcome, classify_end, refusal_error, total_usage
from .progress import tool_progress_frame
from .reply_text import Diverged, ReplyText
from .sse import SSEWriter, dumps, event_frame, json_string
from .tool_stream import StreamedCall, StreamedCalls

log = logging.getLogger(__name__)


class ResponseShape:
    """The Response object and its one output message, as JSON-ready dicts."""

    def __init__(self, response_id: str, message_id: str, model: str, *, instructions: str | None,
                 previous_response_id: str | None, store: bool, created_at: int | None = None,
                 options: TurnOptions = NO_OPTIONS) -> None:
        self.options = options  # echoed in the Response object, as OpenAI does
        self.response_id = response_id
        self.message_id = message_id
        self.model = model
        self.instructions = instructions
        self.previous_response_id = previous_response_id
        self.store = store
        self.created_at = int(time.time()) if created_at is None else created_at

    def response(self, status: str, output: list[dict], *, usage: UsageReport | None = None,
                 error: dict | None = None) -> dict[str, Any]:
        options = self.options
        body = options.body
        return {
            "id": self.response_id, "object": "response", "created_at": self.created_at, "status": status,
            "error": error,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": self.instructions, "model": self.model,
            "output": output, "parallel_tool_calls": options.parallel_tool_calls is not False,
            "tool_choice": _tool_choice(options.tool_choice), "tools": [flat_tool(t) for t in options.client_tools],
            "previous_response_id": self.previous_response_id, "store": self.store,
            "metadata": dict(body.get("metadata") or {}),
            "temperature": body.get("temperature"), "top_p": body.get("top_p"),
            "max_output_tokens": body.get("max_completion_tokens"), "truncation": "disabled",
            "text": {"format": _text_format(body.get("response_format"))},
            "usage": _usage(usage) if usage is not None else None,
        }

    def function_call(self, call: Mapping[str, Any], status: str = "completed") -> dict[str, Any]:
        """A call of the client's own tool (a Chat Completions ``tool_calls`` entry) as an output item."""
        function = call["function"]
        return {"id": f"fc_{call['id']}", "type": "function_call", "status": status, "call_id": call["id"],
                "name": function["name"], "arguments": function["arguments"] if status == "completed" else ""}

    def part(self, text: str, annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"type": "output_text", "text": text, "annotations": annotations or [], "logprobs": []}

    def message(self, status: str, text: str | None,
                annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        content = [] if text is None else [self.part(text, annotations)]
        return {"id": self.message_id, "type": "message", "role": "assistant", "status": status, "content": content}


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, Mapping):
        return {"type": "function", "name": choice["function"]["name"]}
    return choice or "auto"


def _text_format(fmt: Any) -> dict[str, Any]:
    """``text.format`` as echoed: a Chat Completions ``response_format`` in Responses shape."""
    if not isinstance(fmt, Mapping):
        return {"type": "text"}
    if fmt.get("type") == "json_schema":
        return {"type": "json_schema", **fmt["json_schema"]}
    return {"type": fmt.get("type")}


def final_status(end: TurnEnd | None) -> str:
    """``incomplete`` for a reply cut by the token limit, else ``completed``."""
    return "incomplete" if end is not None and end.finish_reason == "length" else "completed"


def _usage(usage: UsageReport) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": usage.completion_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total_tokens}


class ResponseEvents:
    """Numbers and renders events; ``seq`` is the next ``sequence_number``."""

    def __init__(self, shape: ResponseShape) -> None:
        self.shape = shape
        self.seq = 0
        self.items = 0  # output items added so far (the next one's output_index)
        self.message_index = 0
        self._delta_head = ""
        self._place_message(0)

    def _place_message(self, index: int) -> None:
        self.message_index = index
        item = dumps(self.shape.message_id)
        self._delta_head = ('event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
                            f'"item_id":{item},"output_index":{index},"content_index":0,"logprobs":[],"delta":')

    def add_message(self) -> int:
        """The message item's ``output_index``: the next one."""
        self._place_message(self.items)
        self.items += 1
        return self.message_index

    def call_added(self, call: StreamedCall) -> bytes:
        """A client tool call's ``function_call`` item, added (its arguments follow as they stream)."""
        call.slot = self.items
        self.items += 1
        item = self.shape.function_call(_chat_call(call), "in_progress")
        return self.frame("response.output_item.added", {"output_index": call.slot, "item": item})

    def call_arguments(self, call: StreamedCall, piece: str) -> bytes:
        return self.frame("response.function_call_arguments.delta",
                          {"item_id": f"fc_{call.call_id}", "output_index": call.slot, "delta": piece})

    def call_done(self, call: StreamedCall, status: str = "completed") -> tuple[bytes, dict[str, Any]]:
        """The ``.done`` events of a call's arguments and item; and the item."""
        item = {**self.shape.function_call(_chat_call(call)), "status": status}
        frames = b""
        if status == "completed":
            frames = self.frame("response.function_call_arguments.done",
                                {"item_id": item["id"], "output_index": call.slot, "name": call.name,
                                 "arguments": call.arguments})
        return frames + self.frame("response.output_item.done", {"output_index": call.slot, "item": item}), item

    def frame(self, event_type: str, body: dict[str, Any]) -> bytes:
        body = {"type": event_type, **body, "sequence_number": self.seq}
        self.seq += 1
        return event_frame(event_type, body)

    def delta(self, text: str) -> bytes:
        frame = f'{self._delta_head}{json_string(text)},"sequence_number":{self.seq}}}\n\n'
        self.seq += 1
        return frame.encode()

    def item_location(self) -> dict[str, Any]:
        return {"item_id": self.shape.message_id, "output_index": self.message_index, "content_index": 0}


def _chat_call(call: StreamedCall) -> dict[str, Any]:
    """A streamed call as a Chat Completions ``tool_calls`` entry (what ``ResponseShape.function_call`` reads)."""
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


async def write_responses_stream(sse: SSEWriter, events: AsyncIterator[StreamEvent], shape: ResponseShape, *,
                                 tool_progress: bool, on_text: Callable[[int], None],
                                 shutting_down: Callable[[], bool],
                                 starts_open: bool = False,
                                 render_media: Callable[[Sequence[Media]], Awaitable[RenderedMedia]] | None = None,
                                 verbatim: bool = False, hold: float = 0.0) -> tuple[Outcome, dict[str, Any]]:
    """Relay ``events`` as Responses events; return the outcome and the final Response object.

    ``starts_open`` is ``model.reasoning_starts_open`` (replies open inside reasoning).
    ``render_media``: the turn's media, as Markdown after the text (one last
    delta) with a ``url_citation`` annotation per link, and an
    ``image_generation_call`` item per inlined image, after the message. ``hold``: as in
    :func:`.chat_stream.write_chat_stream` (an upstream's refusal before anything was sent is raised as
    :class:`ApiError`).
    """
    ev = ResponseEvents(shape)
    outcome = Outcome()
    reply = ReplyText(starts_open=starts_open, verbatim=verbatim)
    client_tools = shape.options.client_tool_names
    calls = StreamedCalls(client_tools)
    refused: ApiError | None = None
    reports: list[UsageReport] = []
    end: TurnEnd | None = None
    media: RenderedMedia | None = None
    opened = False

    def open_item() -> bytes:
        nonlocal opened
        opened = True
        index = ev.add_message()
        return (ev.frame("response.output_item.added", {"output_index": index,
                                                        "item": shape.message("in_progress", None)})
                + ev.frame("response.content_part.added", {**ev.item_location(), "part": shape.part("")}))

    initial = shape.response("in_progress", [])
    out = Frames(sse, on_text)  # written before the agent waits for anything, as Chat Completions (coalesce.py)
    out.add(ev.frame("response.created", {"response": initial})
            + ev.frame("response.in_progress", {"response": initial}))
    out.hold(hold)
    try:
        try:  # closing the agent's iterator closes the upstream request (as contextlib.aclosing, a frame less)
            anext = events.__anext__
            while True:
                try:
                    event = await next_event(anext, out.flush_before_wait if out.frames else None)
                except StopAsyncIteration:
                    break
                if out.held:
                    out.release()
                if type(event) is TextDelta:
                    visible = reply.feed(event.text)[1]
                    if visible:
                        if not opened:
                            out.add(open_item())
                        out.add(ev.delta(visible), 1)
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
                        out.add(ev.call_arguments(call, event.delta))
                elif isinstance(event, StreamReset):
                    reply.reset()
                    calls.reset()
                elif isinstance(event, (ToolCallStarted, ToolCallFinished)):
                    if event.name in client_tools:
                        call = calls.started(event) if isinstance(event, ToolCallStarted) else None
                        if call is not None:
                            out.add(ev.call_added(call))
                    elif tool_progress:
                        out.add(tool_progress_frame(event))
        finally:
            await events.aclose()  # type: ignore[attr-defined]
        code, message = classify_end(end, shutting_down())
        if code is not None and not out.wrote:
            refused = refusal_error(end)
        if code is None:
            visible = reply.finish()[1]
            if end is not None and end.media and render_media is not None:
                media = await render_media(end.media)
                visible += media.tail(reply.sent)
            if visible:
                if not opened:
                    out.add(open_item())
                out.add(ev.delta(visible), 1)
        else:
            outcome.fail(code, message, refusal_error(end))
    except Diverged as exc:
        log.warning("response %s: %s; failing the response", shape.response_id, exc)
        outcome.fail(STREAM_RESET)
    except (asyncio.CancelledError, ConnectionError):
        raise
    except Exception:
        log.exception("response %s: the agent failed", shape.response_id)
        outcome.fail(INTERNAL)
    finally:
        out.close()
    if refused is not None:
        raise refused  # nothing was written: the client gets the upstream's status (routes.py)
    finals: list[tuple[StreamedCall, str, bool]] = []
    left: list[StreamedCall] = []
    if outcome.ok:
        assert end is not None
        try:
            left = calls.leftover(end.tool_calls, end.finish_reason == "length")
            finals = list(calls.finish(end.tool_calls))
        except Diverged as exc:
            log.warning("response %s: %s; failing the response", shape.response_id, exc)
            outcome.fail(STREAM_RESET)
    outcome.text, outcome.end = reply.sent, end
    outcome.usage = total_usage(reports, end)
    text = outcome.text
    if outcome.ok:
        assert end is not None
        text = text + (media.tail(text) if media is not None else "")
        notes = media.annotations(text) if media is not None else []
        placed: dict[int, dict[str, Any]] = {}  # by output_index
        tail = b""
        for call, rest, new in finals:  # calls not announced yet, and the arguments that did not stream
            if new:
                tail += ev.call_added(call)
            if rest:
                tail += ev.call_arguments(call, rest)
        if opened or not end.tool_calls:  # a turn that only calls the client's tools has no message
            tail += b"" if opened else open_item()
            for i, note in enumerate(notes):
                tail += ev.frame("response.output_text.annotation.added",
                                 {**ev.item_location(), "annotation_index": i, "annotation": note})
            item = shape.message("completed", text, notes)
            tail += ev.frame("response.output_text.done", {**ev.item_location(), "text": text, "logprobs": []})
            tail += ev.frame("response.content_part.done", {**ev.item_location(), "part": shape.part(text, notes)})
            tail += ev.frame("response.output_item.done", {"output_index": ev.message_index, "item": item})
            placed[ev.message_index] = item
        for call, _, _ in finals:
            frames, done = ev.call_done(call)
            tail += frames
            placed[call.slot] = done
        for call in left:  # cut short by the token limit before the call was complete
            frames, done = ev.call_done(call, "incomplete")
            tail += frames
            placed[call.slot] = done
        output: list[dict[str, Any]] = [placed[i] for i in sorted(placed)]
        for image in media.images if media is not None else ():
            index = ev.items
            ev.items += 1
            tail += ev.frame("response.output_item.added", {"output_index": index,
                                                            "item": {**image, "status": "generating", "result": None}})
            tail += ev.frame("response.output_item.done", {"output_index": index, "item": image})
            output.append(image)
        status = final_status(end)
        final = shape.response(status, output, usage=outcome.usage)
        tail += ev.frame(f"response.{status}", {"response": final})
    else:
        output = [shape.message("incomplete", text)] if opened else []
        fields = outcome.error_fields()
        code = fields["code"] if fields["code"] in ("rate_limit_exceeded", "invalid_prompt") else "server_error"
        error = {"code": code, "message": fields["message"]}  # (the SDK knows a fixed list of codes)
        final = shape.response("failed", output, usage=outcome.usage, error=error)
        tail = ev.frame("response.failed", {"response": final})
    await out.end(tail, eof=False)  # the body ends after the response is stored (routes.py)
    return outcome, final
