"""Tool-progress events, for a request that asks for them.

The agent's own tools run inside the gateway; the client only sees the
final text. A client that wants to show "running search…" asks for these
with the request field ``hermes_tool_progress: true`` or the header
``X-Hermes-Tool-Progress: true``; ``api_server.tool_progress_events`` only
sets the default for requests that say neither.

They travel as SSE comments, one line each:
``: hermes.tool_progress {"type":"tool.started","call_id":...,"name":...}``
(then ``tool.finished`` with ``ok`` and ``summary``), on both endpoints.
Every SSE parser skips comments, so no client can choke on them: the
``openai`` SDKs' stream helpers (the npm SDK's ``responses.stream()``
throws on an event type it does not know), the Agents SDK, the AI SDK.
A client that wants them reads the comment lines of the raw stream. They
carry no ``sequence_number`` and are not Responses events (issue 34).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..events import ToolCallFinished, ToolCallStarted
from ..http.errors import bad_request
from .sse import dumps

EVENT_NAME = "hermes.tool_progress"
COMMENT = b": " + EVENT_NAME.encode() + b" "
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
    """The progress as one SSE comment line (compact JSON has no raw newline)."""
    return COMMENT + dumps(progress_body(event)).encode() + b"\n\n"
