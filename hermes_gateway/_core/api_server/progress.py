"""Tool-progress events, for a request that asks for them.

The agent's own tools run inside the gateway; the client only sees the
final text. A client that wants to show "running search…" asks for these
with the request field ``hermes_tool_progress: true`` or the header
``X-Hermes-Tool-Progress: true``; ``api_server.tool_progress_events`` only
sets the default for requests that say neither.

They travel under their own SSE event name, ``hermes.tool_progress``, and
are shaped so that clients that ignore event names (the official SDKs) do
not break: on Chat Completions each is a valid chunk with an empty
``delta.content`` (OpenAI's quickstart loop ``chunk.choices[0].delta.content``
reads ``""``) and the progress under ``hermes_tool_progress``. On Responses
they carry no ``sequence_number``: they are not Responses events, and a
client ignoring them must not see a gap.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..events import ToolCallFinished, ToolCallStarted
from ..http.errors import bad_request
from .sse import event_frame

EVENT_NAME = "hermes.tool_progress"
FIELD = "hermes_tool_progress"
HEADER = "X-Hermes-Tool-Progress"


def wants_progress(body: Mapping[str, Any], headers: Mapping[str, str], default: bool) -> bool:
    """Whether this request asked for progress events (the body field wins over the header)."""
    value = body.get(FIELD)
    if value is not None:
        if not isinstance(value, bool):
            raise bad_request(f"{FIELD} must be a boolean.", FIELD)
        return value
    header = headers.get(HEADER)
    if header is None:
        return default
    flag = header.strip().lower()
    if flag not in ("true", "false", "1", "0"):
        raise bad_request(f"The {HEADER} header must be true or false.", HEADER)
    return flag in ("true", "1")


def progress_body(event: ToolCallStarted | ToolCallFinished) -> dict[str, Any]:
    if isinstance(event, ToolCallStarted):
        return {"type": "tool.started", "call_id": event.call_id, "name": event.name}
    return {"type": "tool.finished", "call_id": event.call_id, "name": event.name, "ok": event.ok,
            "summary": event.summary}


def tool_progress_frame(event: ToolCallStarted | ToolCallFinished) -> bytes:
    """The Responses form: the progress itself as the data."""
    return event_frame(EVENT_NAME, progress_body(event))


def chat_progress_frame(event: ToolCallStarted | ToolCallFinished, chunk: Mapping[str, Any]) -> bytes:
    """The Chat Completions form: a chunk with an empty content delta (``chunk`` gives id, created, model)."""
    body = {**chunk, "choices": [{"index": 0, "delta": {"content": ""}, "logprobs": None, "finish_reason": None}],
            FIELD: progress_body(event)}
    return event_frame(EVENT_NAME, body)
