"""Tool progress for a platform that shows it as the terminal does: an optional client method.

The preview's progress line (``🔧 NAME…``, :meth:`.session.StreamSession.tool_started`)
disappears when the tool ends and never reaches the final text. A client
that can show more — the web chat, which draws notes beside the reply like
the terminal's ``🔧 calling NAME`` / ``✓ NAME: summary`` lines — defines::

    async def on_tool_progress(self, stream, name, *, done, ok=True, summary=""): ...

It is called when a tool call starts (``done=False``) and when it has run
(``done=True``, ``ok`` and the result's short ``summary``). A client without
it costs nothing; one that fails costs its note, never the reply.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..events import ToolCallFinished, ToolCallStarted

if TYPE_CHECKING:
    from .session import StreamSession

log = logging.getLogger(__name__)


async def tell_tool_progress(session: "StreamSession", event: ToolCallStarted | ToolCallFinished) -> None:
    """Hand ``event`` to the platform client's ``on_tool_progress``, if it has one."""
    method = getattr(session.hooks.running_client(), "on_tool_progress", None)
    if not callable(method):
        return
    try:
        if isinstance(event, ToolCallStarted):
            await method(session.stream, event.name, done=False)
        else:
            await method(session.stream, event.name, done=True, ok=event.ok, summary=event.summary)
    except Exception as exc:  # a note is not worth a reply
        log.info("%s: tool progress not shown: %s: %s", session.stream.platform.name, type(exc).__name__, exc)
