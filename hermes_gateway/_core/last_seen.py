"""Where a platform's catch-up starts reading: the last message seen per channel, kept in the platform's store.

A platform that does not redeliver what was sent while the gateway was
down (Discord, Slack) reads each channel's history after the last message
it saw there. That position must survive a restart and be the same on
every replica, so it lives in the platform's key-value store
(:meth:`~.platform_context.PlatformContext.set_value`): one value, a dict
``{channel: [position, kind]}`` of at most ``max_channels`` channels (the
least recently active forgotten first, so the value stays far within the
store's 64 KiB). A burst of messages costs one write, not one each: the
write runs in the background and writes again if more came meanwhile.

``order(position)`` turns a platform's message position into a number to
compare (a Discord snowflake with ``int``, a Slack ``ts`` with ``float``);
it raises ``ValueError`` (or ``TypeError``) for a position that is not
one, and such a stored entry is dropped on :meth:`LastSeen.load`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Protocol

from .secrets import scrub

log = logging.getLogger(__name__)

__all__ = ["LastSeen"]


class ValueStore(Protocol):
    """What :class:`LastSeen` uses of a platform's context."""

    async def get_value(self, key: str, default: Any = None) -> Any: ...

    async def set_value(self, key: str, value: Any) -> None: ...


class LastSeen:
    """The last message seen per channel (live or fetched), persisted with one write per burst.

    ``LastSeen(context, order=int)``; ``await load()`` at start, ``note(channel, position, kind)`` for each
    message seen, ``get(channel)`` for where to read from, ``await flush()`` when the client stops.
    ``platform`` names the platform in the log lines.
    """

    def __init__(self, context: ValueStore, *, order: Callable[[str], float], platform: str,
                 key: str = "catch_up.last_seen", max_channels: int = 500) -> None:
        self._context = context
        self._order = order
        self._platform = platform
        self.key = key
        self._max_channels = max_channels
        self._seen: dict[str, list[str]] = {}   # channel -> [position, kind], least recently noted first
        self._dirty = False
        self._saving: asyncio.Task[None] | None = None

    async def load(self) -> None:
        """What an earlier run (or another replica) saw; entries that are not positions are dropped."""
        try:
            stored = await self._context.get_value(self.key, {})
        except Exception as exc:  # the catch-up then reads the whole window; the core's dedupe drops repeats
            log.warning("%s: the last messages seen were not read (%s); catching up within the window",
                        self._platform, scrub(f"{type(exc).__name__}: {exc}"))
            return
        if not isinstance(stored, dict):
            return
        for channel, value in stored.items():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and self._valid(value[0]):
                self._seen.setdefault(str(channel), [value[0], str(value[1])])

    def get(self, channel: str) -> tuple[str, str] | None:
        """``(position, kind)`` of the last message seen in ``channel``, or None."""
        known = self._seen.get(channel)
        return (known[0], known[1]) if known is not None else None

    def note(self, channel: str, position: str, kind: str) -> None:
        """A message of ``channel`` was seen: later catch-ups start after it (an older one changes nothing)."""
        known = self._seen.get(channel)
        if known is not None and self._order(known[0]) >= self._order(position):
            return
        self._seen.pop(channel, None)
        self._seen[channel] = [position, kind]
        while len(self._seen) > self._max_channels:
            del self._seen[next(iter(self._seen))]
        self._dirty = True
        if self._saving is None or self._saving.done():
            self._saving = asyncio.get_running_loop().create_task(self._save(), name=f"{self._platform}-last-seen")

    async def flush(self) -> None:
        """Write what is not written yet (a client's stop), or wait for the write under way."""
        if self._dirty and (self._saving is None or self._saving.done()):
            await self._save()
        elif self._saving is not None:
            await asyncio.gather(self._saving, return_exceptions=True)

    async def _save(self) -> None:
        while self._dirty:
            self._dirty = False
            try:
                await self._context.set_value(self.key, self._seen)
            except Exception as exc:  # the next catch-up reads more, and the core's dedupe drops the rest
                log.warning("%s: the last messages seen were not stored: %s", self._platform, scrub(str(exc)))
                return

    def _valid(self, position: str) -> bool:
        try:
            self._order(position)
        except (TypeError, ValueError):
            return False
        return True
