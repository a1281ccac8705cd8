"""Which chat the turn running in this task answers: for a tool that acts on "this chat" (a reminder).

Set by the turn (:func:`..conversation.answer_turn`) before the model runs;
read by the tool when the model calls it, in the same task's context. A
plain context variable beneath both, so the turn never imports the tools'
package for it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from .incoming import Incoming

#: ``(gateway, the message being answered)`` while a turn runs in this context; None elsewhere.
TURN: ContextVar[tuple[Any, Incoming] | None] = ContextVar("hermes_reminder_turn", default=None)

#: The ids of the turn running in this context, for its log lines (``logging.format: json``): platform, chat,
#: thread, message and update id. Set when the turn starts; each turn runs in its own task, so it ends with it.
LOG_IDS: ContextVar[dict[str, str] | None] = ContextVar("hermes_turn_log_ids", default=None)


def log_ids(incoming: Incoming) -> dict[str, str]:
    """What names a turn in a log line: the fields of ``incoming`` that are set (never the text)."""
    ids = {"platform": incoming.platform, "chat_id": incoming.chat_id, "thread_id": incoming.thread_id,
           "message_id": incoming.message_id, "update_id": incoming.update_id, "user_id": incoming.sender_id}
    return {name: str(value) for name, value in ids.items() if value is not None}
