"""The one history policy: which stored messages go back to the model, and how a message is sized.

Every surface (chats, the terminal, ``previous_response_id``) sends the
model the most recent part of its conversation: at most
``history_messages`` messages and about ``history_chars`` characters. The
cut is always made at a user message, so the model never sees a tool
result without the call that asked for it, nor a tool call without its
results. If even the newest turn does not fit, nothing is sent: a broken
fragment would mislead the model more than a fresh start.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence


def message_chars(message: dict[str, Any]) -> int:
    """About how many characters of ``message`` the model reads: its text, tool names and arguments."""
    total = 0
    content = message.get("content")
    if isinstance(content, str):
        total += len(content)
    elif content is not None:
        total += len(json.dumps(content, ensure_ascii=False))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            total += len(str(function.get("name") or "")) + len(str(function.get("arguments") or ""))
        else:
            total += len(json.dumps(call, ensure_ascii=False, default=str))
    return total


def bound_newest_first(newest_first: Iterable[tuple[dict[str, Any], int]], max_messages: int,
                       max_chars: int) -> list[dict[str, Any]]:
    """Apply the policy to ``(message, chars)`` pairs given newest first (a database cursor can stop early).

    Returns the kept messages oldest first, starting with a user message.
    """
    kept: list[dict[str, Any]] = []
    chars = 0
    for message, size in newest_first:
        if len(kept) >= max_messages or chars + size > max_chars:
            break
        kept.append(message)
        chars += size
    kept.reverse()
    for start, message in enumerate(kept):
        if message.get("role") == "user":
            return kept[start:]
    return []


def bound_history(messages: Sequence[dict[str, Any]], max_messages: int, max_chars: int) -> list[dict[str, Any]]:
    """The policy on a whole list (oldest first in, oldest first out)."""
    return bound_newest_first(((m, message_chars(m)) for m in reversed(messages)), max_messages, max_chars)
