"""How the backends turn messages into stored text and back: JSON, checked, the same for every backend."""

from __future__ import annotations

import json
from typing import Any, Sequence

from .base import ConversationKey, ReplyInFlight, StoreError

#: The API server's stored responses, all together, stay under this many bytes (oldest go first) ...
DEFAULT_RESPONSE_BYTES = 64 * 1024 * 1024
#: ... and under this many responses.
DEFAULT_MAX_RESPONSES = 10_000
#: How many inbound update ids are remembered for dedupe across restarts (the newest).
DEFAULT_MAX_UPDATES = 100_000
#: How much of a conversation's first user message is kept for listings.
FIRST_TEXT_CHARS = 300


def encode(value: Any, what: str = "message") -> str:
    """``value`` as JSON text; a value that is not JSON is a :class:`StoreError` (so nothing half-stored)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot store a {what} that is not JSON: {exc}") from None


def decode(text: str) -> Any:
    return json.loads(text)


def key_parts(key: ConversationKey) -> tuple[str, str, str]:
    """(platform, chat, thread) as stored: ids as text, no thread as ``""``."""
    thread = "" if key.thread_id is None else str(key.thread_id)
    return str(key.platform), str(key.chat_id), thread


def first_user_text(messages: Any) -> str | None:
    """The text of the first user message, clipped for listings (None if there is none)."""
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else encode(content)
            return text[:FIRST_TEXT_CHARS]
    return None


def encode_shown(shown: Any) -> str:
    """A reply in flight's messages as stored: a JSON list of ``[message id, chat, thread, text, ended]``."""
    return json.dumps([[m.message_id, m.chat_id, m.thread_id, m.text, bool(m.ended)] for m in shown],
                      ensure_ascii=False)


#: The columns of a reply in flight, in the order :func:`decode_in_flight` reads them (both SQL backends).
IN_FLIGHT_COLUMNS = "id, platform, chat_id, thread_id, chat_kind, message_id, text, owner, shown, attempt, started"


def decode_in_flight(row: Sequence[Any]) -> ReplyInFlight:
    """A row of :data:`IN_FLIGHT_COLUMNS` as the reply in flight it records."""
    rid, platform, chat, thread, kind, message, text, owner, shown, attempt, started = row
    return ReplyInFlight(rid, platform, chat, thread, kind, message, text, owner, decode_shown(shown),
                         int(attempt), float(started))


def decode_shown(text: str) -> tuple[Any, ...]:
    """The inverse of :func:`encode_shown` (a ``ShownMessage`` tuple)."""
    from .base import ShownMessage

    return tuple(ShownMessage(str(m), str(c), None if t is None else str(t), str(x), bool(e))
                 for m, c, t, x, e in json.loads(text or "[]"))
