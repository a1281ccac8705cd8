"""One web chat's live events: what the browser's SSE stream replays and waits on.

Every event carries a whole state (a message's entire visible text), so a
reader that missed some, or reconnects with ``Last-Event-ID``, is right
again with the next one; and a message's newer text replaces its older
preview in the backlog, so a long reply costs one entry, not one per token.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

#: Events a feed keeps for a browser that reconnects (``Last-Event-ID``).
FEED_BACKLOG = 500


@dataclass
class FeedEvent:
    id: int
    data: str  # JSON


class ChatFeed:
    """One chat's events, in order, with a backlog for reconnects; any number of readers."""

    def __init__(self) -> None:
        self.events: deque[FeedEvent] = deque(maxlen=FEED_BACKLOG)
        self.next_id = 1
        self.changed = asyncio.Event()
        self.pending = 0  # the person's messages not yet answered (a reply, a command beside it)
        self._previews: dict[str, FeedEvent] = {}  # message id -> its latest preview still in the backlog

    def publish(self, event: dict[str, Any]) -> None:
        """Add an event for every reader. A message's new text replaces its older preview in the backlog
        (each carries the whole text), so a long reply costs the backlog one entry, not one per token."""
        item = FeedEvent(self.next_id, json.dumps(event))  # ASCII: a lone surrogate cannot break the wire
        if event.get("type") == "text":
            older = self._previews.pop(event["id"], None)
            if older is not None:
                try:
                    self.events.remove(older)
                except ValueError:  # already pushed out of the backlog
                    pass
            if not event.get("final"):
                self._previews[event["id"]] = item
        self.events.append(item)
        self.next_id += 1
        self.changed.set()
        self.changed = asyncio.Event()

    @property
    def busy(self) -> bool:
        """A reply (or a queued message) is still to come: the page shows Stop."""
        return self.pending > 0

    def after(self, last_id: int) -> list[FeedEvent]:
        return [e for e in self.events if e.id > last_id]
