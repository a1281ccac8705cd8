"""Read what a gateway stored, from a test: a chat's history in a ``state.db`` a gateway process wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._core.store import ConversationKey, SQLiteStore


async def stored_history(path: str | Path, platform: str, chat_id: str,
                         thread_id: str | None = None) -> list[dict[str, Any]]:
    """The stored conversation of a chat in the SQLite file ``path``, oldest message first (``role``, ``content``).

    For end-to-end tests that run ``hermes-gateway run`` as a process and check what it remembered.
    """
    store = SQLiteStore(Path(path))
    try:
        return await store.history(ConversationKey(platform, str(chat_id), thread_id))
    finally:
        await store.close()
