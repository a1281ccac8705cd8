"""Whether the Socket Mode websocket is up, told to the gateway (``PlatformContext.report_connected``).

slack_sdk's Socket Mode client reconnects by itself, but says nothing
usable while it does: its close listeners run only once the new session is
already open, and its connect loop retries a refused connection silently
every few seconds. Its ``is_connected()`` (a socket open, pings answered)
is what is true at any moment, and cheap (no I/O); this watch reads it
twice a second and reports each change, so the dashboard shows a dropped
connection as ``disconnected`` while slack_sdk retries, and ``connected``
once it is back.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from hermes_gateway import PlatformContext

#: Seconds between two looks at the socket: a drop shows within this.
INTERVAL = 0.5
DOWN = "the Socket Mode websocket is not connected; slack_sdk is reconnecting"


class SocketWatch:
    """Reports the Socket Mode client's connection while it runs; ``stop()`` before closing the client."""

    def __init__(self, client: Any, context: PlatformContext, *, up: bool | None, interval: float = INTERVAL,
                 on_back: Callable[[], None] | None = None) -> None:
        """``up``: what was already reported (so the first look does not repeat it); ``on_back()``: called
        each time the connection is up again (what was sent meanwhile may need fetching)."""
        self.on_back = on_back
        self.client = client
        self.context = context
        self.interval = interval
        self.up = up
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="slack-socket-watch")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                up = bool(await self.client.is_connected())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a client in the middle of closing: seen again at the next look
                up, why = False, f"Socket Mode: {type(exc).__name__}: {exc}"
            else:
                why = DOWN
            if up != self.up:
                self.up = up
                if up:
                    self.context.report_connected()
                    if self.on_back is not None:
                        self.on_back()
                else:
                    self.context.report_disconnected(why)
            await asyncio.sleep(self.interval)
