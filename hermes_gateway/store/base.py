"""The ``ConversationStore`` seam: every conversation, on every surface, in one place.

Chat platforms, the terminal chat and the API server's
``previous_response_id`` all keep their history here, with one history
policy: a turn stores what the agent added (the user's text, assistant
text, tool calls and their results), and what goes back to the model is
bounded by ``store.history_messages`` / ``store.history_chars``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Which conversation: a chat (and topic/thread) on a platform, ``("cli", "local")``, ...."""

    platform: str
    chat_id: str
    thread_id: str | None = None


class ConversationStore(abc.ABC):
    """Where conversations live. Never blocks the event loop; every write is one transaction."""

    @abc.abstractmethod
    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        """The current conversation of ``key`` as chat messages, bounded by the history policy."""

    @abc.abstractmethod
    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]]) -> None:
        """Append one turn's messages (``TurnEnd.messages``) to the current conversation of ``key``."""

    @abc.abstractmethod
    async def new_conversation(self, key: ConversationKey) -> None:
        """``/new``: the next turn of ``key`` starts a fresh conversation (the old one is kept, listed)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the database; safe to call twice."""

    # ---- inbound dedupe across restarts (a webhook retried after the gateway restarted) ----

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        """Keep these (platform, update id) pairs, so a restarted gateway still knows them.

        The default keeps nothing: a backend without it answers a redelivery
        that arrives across a restart again.
        """

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        """The most recently remembered (platform, update id) pairs, oldest first, at most ``limit``."""
        return []
