"""Stored responses, so ``previous_response_id`` can continue a conversation.

Kept in memory and bounded (oldest evicted first): the gateway is a relay,
not a database, and a restart forgetting old response ids is what OpenAI's
own ``store: false`` clients already cope with. A client that continues from
an evicted id gets a clear 404, never a silently empty history. With
several API keys, a response belongs to the key that created it: to any
other key it does not exist.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoredResponse:
    response: dict[str, Any]          # the Response object as sent (for GET /v1/responses/{id})
    conversation: tuple[dict, ...]    # every message up to and including this reply (no instructions)
    owner: int | None = None          # which API key created it: other keys cannot see or continue it


class ResponseStore:
    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()

    def put(self, response_id: str, item: StoredResponse) -> None:
        self._items[response_id] = item
        self._items.move_to_end(response_id)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def get(self, response_id: str, owner: int | None = None) -> StoredResponse | None:
        """The stored response, if it exists and belongs to ``owner`` (another key's looks absent)."""
        item = self._items.get(response_id)
        if item is None or item.owner != owner:
            return None
        self._items.move_to_end(response_id)
        return item

    def delete(self, response_id: str, owner: int | None = None) -> bool:
        if self.get(response_id, owner) is None:
            return False
        del self._items[response_id]
        return True

    def __len__(self) -> int:
        return len(self._items)
