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
