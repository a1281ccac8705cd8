"""Stored chat messages as the dashboard shows them: role, text, the tools called; read-only, clipped.

The store keeps OpenAI-shaped messages (``content`` a string or a list of
parts, ``tool_calls``, ``role: tool`` results). The browser gets plain
fields only and renders every one with ``textContent``: nothing here is
HTML, and nothing needs escaping on the way.
"""

from __future__ import annotations

import json
from typing import Any

#: The most characters of one message the dashboard is sent (a long tool result would swamp it).
MAX_TEXT = 4000
#: Messages shown under each recent conversation.
LAST = 2


def text_of(content: Any) -> str:
    """The text of a message's ``content``: a string, or the text parts of a list (images named)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif part.get("type") in ("image_url", "input_image"):
                pieces.append("[image]")
        return " ".join(pieces)
    return json.dumps(content, ensure_ascii=False)


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def message_view(message: dict[str, Any]) -> dict[str, Any]:
    """One stored message: ``{"role", "text", "tools"}`` (the names of the tools an assistant message called)."""
    calls = message.get("tool_calls") or ()
    tools = [str((call.get("function") or {}).get("name", "?")) for call in calls if isinstance(call, dict)]
    return {"role": str(message.get("role", "")), "text": clip(text_of(message.get("content"))), "tools": tools}


def conversation_view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A whole stored conversation, system prompts left out (they are the config's, shown there)."""
    return [message_view(m) for m in messages if m.get("role") != "system"]


def last_messages(messages: list[dict[str, Any]], count: int = LAST) -> list[dict[str, Any]]:
    """The last ``count`` messages a person would read: the user's and the assistant's with text."""
    spoken = [m for m in messages if m.get("role") in ("user", "assistant") and text_of(m.get("content")).strip()]
    return [{"role": m["role"], "text": clip(text_of(m.get("content")), 300)} for m in spoken[-count:]]
