"""A reference platform whose client has every optional call into a chat: reactions, buttons and their update.

Each of those calls meets the platform as a text call does: its per-chat budget
(a call beyond it is a 429), a call inside a 429's window is a violation, and
:meth:`CallingReference.rate_limit_next` makes the next call of one kind answer
429 (``"react"``, ``"offer_choice"``, ``"close_choice"``; typing, sends and
uploads take the reference platform's own ``Fault.rate_limited(on=...)``).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

from hermes_gateway import MessageRef, RateLimited, Stream
from hermes_gateway._core.builtin.reference_platform import ScreenMessage, ReferenceClient
from hermes_gateway.testing import ReferencePlatform


@dataclass(frozen=True)
class ExtraCall:
    """One reaction or button call: when it reached the platform and how it was answered."""

    kind: str
    at: float
    chat_id: str
    outcome: str   # "ok" or "rate_limited"


class CallingReference(ReferencePlatform):
    """``reactions``: (chat, message id, emoji, loop time) as set; ``buttons``: message id -> labels under it now."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.reactions: list[tuple[str, str, str, float]] = []
        self.buttons: dict[str, list[str]] = {}
        self.extra: list[ExtraCall] = []
        self._limited: dict[str, list[float]] = {}
        self._ids = itertools.count(1000)

    def rate_limit_next(self, kind: str, retry_after: float) -> None:
        """The next call of ``kind`` answers 429 with ``retry_after`` (the chat is blocked that long)."""
        self._limited.setdefault(kind, []).append(retry_after)

    def first_text_at(self, chat_id: str) -> float:
        """Loop time of the chat's first text call that took effect (a preview or a final text)."""
        return min(c.at for c in self.chat(chat_id).calls
                   if c.kind in ("send", "edit") and c.outcome == "ok")

    def extra_calls(self, kind: str, chat_id: str | None = None) -> list[ExtraCall]:
        return [c for c in self.extra if c.kind == kind and (chat_id is None or c.chat_id == chat_id)]

    def _connect(self, settings: Any, context: Any) -> "_CallingClient":
        return _CallingClient(self, context)

    def _extra_call(self, kind: str, stream: Stream) -> None:
        """Admit one call of ``kind`` as the platform would (429 injected, budget, windows) or raise."""
        chat = self.chat(stream.chat_id)
        now = asyncio.get_running_loop().time()
        queued = self._limited.get(kind)
        if queued:
            retry_after = queued.pop(0)
            if now < chat.blocked_until:
                chat.violations.append(f"{kind} at {now:.3f}s while rate-limited until {chat.blocked_until:.3f}s")
            chat.blocked_until = max(chat.blocked_until, now + retry_after)
            self.extra.append(ExtraCall(kind, now, chat.chat_id, "rate_limited"))
            raise RateLimited(retry_after, f"Too Many Requests: retry after {retry_after:g}")
        try:
            self._admit(stream, "send", None, kind, "on_stream_end")  # the budget and the windows of any call
        except RateLimited:
            self.extra.append(ExtraCall(kind, now, chat.chat_id, "rate_limited"))
            raise
        self.extra.append(ExtraCall(kind, now, chat.chat_id, "ok"))


class _CallingClient(ReferenceClient):
    platform: CallingReference

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        self.platform._extra_call("react", Stream(platform=self.platform.platform, chat_id=chat_id,
                                                  thread_id=thread_id))
        self.platform.reactions.append((chat_id, message_id, emoji, asyncio.get_running_loop().time()))

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        self.platform._extra_call("offer_choice", stream)
        message_id = f"q{next(self.platform._ids)}"
        self.platform.chat(stream.chat_id).messages.append(ScreenMessage(message_id, choice.prompt, [choice.prompt]))
        self.platform.buttons[message_id] = [option.label for option in choice.options]
        return MessageRef(chat_id=stream.chat_id, message_id=message_id, thread_id=stream.thread_id)

    async def close_choice(self, stream: Stream, ref: MessageRef, text: str) -> None:
        self.platform._extra_call("close_choice", stream)
        for message in self.platform.chat(stream.chat_id).messages:
            if message.id == ref.message_id:
                message.text = text
                message.history.append(text)
        self.platform.buttons.pop(ref.message_id, None)
