"""A platform's catch-up read in the background: one at a time, started after each (re)connect.

Discord's and Slack's plugins read what was sent while the gateway was away
after every connect (a READY, a reconnected socket). Starting that read only
when ``conversation.catch_up`` is ``answer``, never running two at once,
letting a test wait for it, and stopping it at the client's stop with what
was seen written (:meth:`~.last_seen.LastSeen.flush`) is the same for every
such platform; the reading itself is the plugin's :meth:`CatchUpTask.read_missed`.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from .last_seen import LastSeen

__all__ = ["CatchUpTask"]


class CatchUpSetting(Protocol):
    """What :class:`CatchUpTask` reads of a platform's context: ``conversation.catch_up`` for this platform."""

    @property
    def catch_up(self) -> str: ...


class CatchUpTask:
    """Subclass it and write ``async def read_missed(self)``; call :meth:`start` after each connect,
    :meth:`stop` when the client stops. ``name`` names the task (``"acmechat-catch-up"``)."""

    def __init__(self, context: CatchUpSetting, last_seen: LastSeen, *, name: str) -> None:
        self.context = context
        self.last_seen = last_seen
        self._name = name
        self._running: asyncio.Task[None] | None = None

    async def read_missed(self) -> None:
        """Read each chat's history after the last message seen and hand it to the core (the plugin's part)."""
        raise NotImplementedError

    def start(self) -> None:
        """Read what was missed, in the background, unless a read is under way or catch-up is off."""
        if self.context.catch_up != "answer":
            return
        if self._running is None or self._running.done():
            self._running = asyncio.get_running_loop().create_task(self.read_missed(), name=self._name)

    async def wait(self) -> None:
        """Until the catch-up under way (if any) has handed the core every message it found."""
        running = self._running
        if running is not None:
            await asyncio.gather(running, return_exceptions=True)

    async def stop(self) -> None:
        """Stop reading; keep what was seen."""
        running, self._running = self._running, None
        if running is not None and not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
        await self.last_seen.flush()
