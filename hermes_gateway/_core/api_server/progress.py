"""Opt-in tool-progress events (``api_server.tool_progress_events``).

The agent's tools run inside the gateway; the client only sees the final
text. Clients that want to show "running search…" can turn these on. They
travel as their own SSE event name, ``hermes.tool_progress``, which no
OpenAI event uses — but strict clients (the official SDKs among them) try to
parse every ``data:`` payload as a chunk/event of their own, so this stays
off by default. They carry no ``sequence_number``: they are not Responses
events, and a client ignoring them must not see a gap.
"""

from __future__ import annotations

from ..events import ToolCallFinished, ToolCallStarted
from .sse import event_frame

EVENT_NAME = "hermes.tool_progress"


def tool_progress_frame(event: ToolCallStarted | ToolCallFinished) -> bytes:
    if isinstance(event, ToolCallStarted):
        body = {"type": "tool.started", "call_id": event.call_id, "name": event.name}
    else:
        body = {"type": "tool.finished", "call_id": event.call_id, "name": event.name, "ok": event.ok,
                "summary": event.summary}
    return event_frame(EVENT_NAME, body)
