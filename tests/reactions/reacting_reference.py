"""A reference platform whose client can react: each reaction is recorded with when it was set."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_gateway.testing import ReferencePlatform
from hermes_gateway._core.builtin.reference_platform import ReferenceClient


class ReactingReference(ReferencePlatform):
    """``reactions``: (chat, message id, emoji, loop time) in the order they were set; ``first_text_at``:
    chat -> loop time of the chat's first text call."""

    def __init__(self, *args: Any, fail_reactions: bool = False, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.reactions: list[tuple[str, str, str, float]] = []
        self.fail_reactions = fail_reactions
        self.first_text_at: dict[str, float] = {}
        self.on_call = self._note_text

    def _note_text(self, chat: Any, call: Any) -> None:
        if call.hook != "on_stream_start" and chat.chat_id not in self.first_text_at:
            self.first_text_at[chat.chat_id] = asyncio.get_running_loop().time()

    def _connect(self, settings: Any, context: Any) -> "_ReactingClient":
        return _ReactingClient(self, context)


class _ReactingClient(ReferenceClient):
    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        if self.platform.fail_reactions:
            raise RuntimeError("reactions are off in this chat")
        self.platform.reactions.append((chat_id, message_id, emoji, asyncio.get_running_loop().time()))
