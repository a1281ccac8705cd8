"""Stored responses, so ``previous_response_id`` continues a conversation, even after a restart.

The responses live in the gateway's conversation store (the same SQLite
file as every chat's history, ``responses`` table), so a client can stop,
the gateway can restart, and ``previous_response_id`` still works. Two
bounds keep it from growing without limit (issue 13): each stored
conversation is cut by the one history policy (``store.history_messages``
/ ``store.history_chars``: a chain of ``previous_response_id`` cannot grow
past what the model would be sent anyway), and the responses together are
bounded by bytes (and count), oldest evicted first. A client that
continues from an evicted id gets a clear 404, never a silently empty
history.

With several API keys, a response belongs to the key that created it: to
any other key it does not exist. The owner is stored as a fingerprint of
the key (never the key itself), so reordering ``api_keys`` in the config
does not hand one client's responses to another.
"""

from __future__ import annotations

from typing import Any, Callable

from ..store.api_owners import owner_fingerprint
from ..store.base import ConversationStore, StoredResponse
from ..store.memory import MemoryStore
from ..store.policy import bound_history

__all__ = ["ResponseStore", "StoredResponse", "owner_fingerprint"]


class ResponseStore:
    """The API server's view of the conversation store: put, get and delete responses, history-bounded."""

    def __init__(self, backend: ConversationStore | Callable[[], ConversationStore] | None = None, *,
                 history_messages: int = 40, history_chars: int = 60_000) -> None:
        """``backend`` may be a callable (``lambda: gateway.store``), so nothing opens until first used."""
        self._backend = backend if backend is not None else MemoryStore()
        self.history_messages = history_messages
        self.history_chars = history_chars

    @property
    def backend(self) -> ConversationStore:
        backend = self._backend
        return backend if isinstance(backend, ConversationStore) else backend()

    async def put(self, response_id: str, response: dict[str, Any], conversation: list[dict[str, Any]],
                  owner: str | None) -> None:
        """Keep ``response`` and the conversation up to it, cut by the history policy."""
        kept = bound_history(conversation, self.history_messages, self.history_chars)
        await self.backend.put_response(response_id, StoredResponse(response, tuple(kept), owner))

    async def get(self, response_id: str, owner: str | None) -> StoredResponse | None:
        """The stored response, if it exists and belongs to ``owner`` (another key's looks absent)."""
        return await self.backend.get_response(response_id, owner)

    async def delete(self, response_id: str, owner: str | None) -> bool:
        return await self.backend.delete_response(response_id, owner)
