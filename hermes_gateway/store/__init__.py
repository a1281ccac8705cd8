"""Conversations that survive a restart: the :class:`ConversationStore` seam and its backends."""

from __future__ import annotations

from typing import Any, Sequence

from .base import ConversationKey, ConversationStore

__all__ = ["ConversationKey", "ConversationStore", "open_store"]


class _InterimMemoryStore(ConversationStore):
    """Interim in-memory store until the SQLite backend lands (being built on the ``store`` branch)."""

    def __init__(self) -> None:
        self.conversations: dict[ConversationKey, list[list[dict[str, Any]]]] = {}
        self.updates: list[tuple[str, str]] = []

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        self.updates.extend(updates)

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        return self.updates[-limit:]

    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        return [dict(m) for m in (self.conversations.get(key) or [[]])[-1]][-40:]

    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]]) -> None:
        self.conversations.setdefault(key, [[]])[-1].extend(dict(m) for m in messages)

    async def new_conversation(self, key: ConversationKey) -> None:
        self.conversations.setdefault(key, [[]]).append([])

    async def close(self) -> None:
        pass


def open_store(config: Any) -> ConversationStore:
    return _InterimMemoryStore()
