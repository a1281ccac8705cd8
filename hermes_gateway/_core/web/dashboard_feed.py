"""Live dashboard updates: one reader of the gateway's state, shared by every open dashboard.

While at least one dashboard listens (``GET /ui/api/state/events``), one
task reads a snapshot every :data:`INTERVAL` seconds and, when it differs
from the last one (clock-driven fields left out:
:func:`.dashboard_state.steady`), publishes it: so at most ``1/INTERVAL``
snapshots a second reach a browser, however busy the gateway is, and the
store is read once per round whatever the number of listeners. With nobody
listening nothing is read. At most :data:`MAX_LISTENERS` connections are
served at once (the next one is told 429). :meth:`DashboardFeed.close`
(the listener's shutdown) ends every stream at once, so the gateway's
bounded stop never waits for an open dashboard.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from .dashboard_state import steady

log = logging.getLogger(__name__)

#: Seconds between two reads of the state (so at most two snapshots a second go out).
INTERVAL = 0.5
#: Open dashboard streams served at once, over all sessions.
MAX_LISTENERS = 32


class DashboardFeed:
    """The latest snapshot, its version, and a wake-up for the streams waiting on the next one."""

    def __init__(self, read: Callable[[], Awaitable[dict[str, Any]]], *, interval: float = INTERVAL,
                 max_listeners: int = MAX_LISTENERS) -> None:
        self.read = read
        self.interval = interval
        self.max_listeners = max_listeners
        self.latest: dict[str, Any] | None = None
        self.version = 0
        self.listeners = 0
        self.closed = asyncio.Event()
        self._steady: Any = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def join(self) -> bool:
        """Count one more stream (and start reading); False when closed or at :data:`MAX_LISTENERS`."""
        if self.closed.is_set() or self.listeners >= self.max_listeners:
            return False
        self.listeners += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="dashboard-feed")
        return True

    def leave(self) -> None:
        """One stream ended; the last one stops the reading (the next ``join`` reads afresh)."""
        self.listeners = max(0, self.listeners - 1)
        if self.listeners == 0 and self._task is not None:
            self._task.cancel()
            self._task = None
            self._steady = None  # the next listener gets a fresh first snapshot at once

    async def wait(self, seen: int, timeout: float) -> bool:
        """Wait until a snapshot newer than version ``seen`` is there (True), the timeout or the close (False)."""
        if self.version > seen:
            return True
        changed, closed = asyncio.ensure_future(self._changed.wait()), asyncio.ensure_future(self.closed.wait())
        try:
            await asyncio.wait({changed, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
            closed.cancel()
        return self.version > seen and not self.closed.is_set()

    async def close(self) -> None:
        """End every stream now and stop reading (the listener shuts down)."""
        self.closed.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while not self.closed.is_set():
            try:
                state = await self.read()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the next round tries again; the streams keep their last snapshot
                log.warning("dashboard: reading the state failed: %s: %s", type(exc).__name__, exc)
            else:
                key = steady(state)
                if key != self._steady:
                    self._steady, self.latest = key, state
                    self.version += 1
                    changed, self._changed = self._changed, asyncio.Event()
                    changed.set()
            await asyncio.sleep(self.interval)
