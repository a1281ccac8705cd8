"""Answer each delivery once: platforms redeliver (a webhook retried, a gateway event replayed)."""

from __future__ import annotations

from collections import OrderedDict


class SeenUpdates:
    """The most recent update ids per platform, bounded so a long-lived gateway keeps constant memory.

    A redelivery comes seconds or minutes after the original, never after
    ``window`` newer updates, so an LRU of that size catches it.
    """

    def __init__(self, window: int = 10_000) -> None:
        self.window = window
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self.unsaved: list[tuple[str, str]] = []  # seen since the last save to the store
        self.hits = 0

    def first_time(self, platform: str, update_id: str | None) -> bool:
        """True the first time ``update_id`` is seen on ``platform`` (always true without an id)."""
        if update_id is None:
            return True
        key = (platform, str(update_id))
        if key in self._seen:
            self._seen.move_to_end(key)
            self.hits += 1
            return False
        self._seen[key] = None
        self.unsaved.append(key)
        if len(self._seen) > self.window:
            self._seen.popitem(last=False)
        return True

    def restore(self, keys: list[tuple[str, str]]) -> None:
        """Ids a previous run saw (from the store), so a redelivery across a restart is still caught."""
        for key in keys[-self.window:]:
            self._seen[key] = None
            self._seen.move_to_end(key)
        while len(self._seen) > self.window:
            self._seen.popitem(last=False)

    def take_unsaved(self) -> list[tuple[str, str]]:
        unsaved, self.unsaved = self.unsaved, []
        return unsaved
