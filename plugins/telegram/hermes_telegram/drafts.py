"""Native drafts (``sendMessageDraft``): the per-reply bookkeeping behind ``transport: draft | auto``.

A draft is Telegram's own animated preview in a private chat: frames with
one stable ``draft_id`` per message, no message id, gone after ~30 s unless
the bot sends the real message. So the core knows a drafted message by a
ref of our own (``draft:<id>``); its final text is one real ``sendMessage``,
remembered under that ref, so a later call edits that message instead of
sending it twice. A refused draft (unknown method, 400, repeated 429)
switches the reply to edits: the next call sends a real message, and
nothing already shown is shown again.

Everything lives in ``stream.state``: one reply's business, gone with it.
"""

from __future__ import annotations

import random
from typing import Any, TypeGuard

from hermes_gateway import MessageRef, Stream

PREFIX = "draft:"
#: 429s on draft frames one reply takes before it gives drafts up.
MAX_RATE_LIMITS = 3


def wanted(stream: Stream, settings: Any) -> bool:
    """Whether this reply's previews go out as drafts (a private chat, and the transport allows it)."""
    if stream.state.get("transport") == "edit":
        return False
    transport = stream.settings.transport or getattr(settings, "transport", "edit")
    return transport in ("draft", "auto") and _private(stream)


def _private(stream: Stream) -> bool:
    if stream.chat_kind is not None:
        return stream.chat_kind == "private"
    return not str(stream.chat_id).startswith("-")  # Telegram: people have positive ids, groups negative


def is_draft(message: MessageRef | None) -> TypeGuard[MessageRef]:
    return message is not None and message.message_id.startswith(PREFIX)


def new_ref(stream: Stream) -> MessageRef:
    """A ref for a new drafted message, with a fresh non-zero draft id."""
    return MessageRef(str(stream.chat_id), f"{PREFIX}{random.randint(1, 2**31 - 1)}", stream.thread_id)


def draft_id(message: MessageRef) -> int:
    return int(message.message_id[len(PREFIX):])


def without_cursor(text: str, cursor: str) -> str:
    """A draft animates by itself: no cursor in its frames."""
    return text[: -len(cursor)] if cursor and text.endswith(cursor) else text


def real(stream: Stream, message: MessageRef | None) -> MessageRef | None:
    """The real message that stands for ``message`` (itself unless it is a draft ref; None if not sent yet)."""
    if not is_draft(message):
        return message
    assert message is not None
    return stream.state.get("sent_for_draft", {}).get(message.message_id)


def remember(stream: Stream, draft: MessageRef, sent: MessageRef) -> None:
    stream.state.setdefault("sent_for_draft", {})[draft.message_id] = sent


def refused(stream: Stream) -> None:
    """Telegram would not take a draft: edits for the rest of this reply."""
    stream.state["transport"] = "edit"


def rate_limited(stream: Stream) -> bool:
    """Count a 429 on a draft frame; True (and edits from now on) when they keep coming."""
    count = stream.state.get("draft_rate_limits", 0) + 1
    stream.state["draft_rate_limits"] = count
    if count >= MAX_RATE_LIMITS:
        refused(stream)
        return True
    return False
