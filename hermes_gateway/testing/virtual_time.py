"""An asyncio event loop whose clock jumps instead of waiting.

When nothing is ready to run, the loop advances its clock straight to the
next timer, so a test of a 15-second stream with 1.5 s edit intervals
runs in milliseconds and always sees the same times. Real I/O still works
(the selector is polled without blocking), which keeps ``run_in_executor``
usable, but tests meant for virtual time should stay in memory.
"""

from __future__ import annotations

import asyncio
import selectors
from typing import Any, Awaitable, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.BaseSelector):
    """Delegates to a real selector; a timed wait with nothing ready moves the clock instead."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.now = 0.0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            return self._real.select(None)  # nothing scheduled: only real I/O can wake us
        ready = self._real.select(0)
        if not ready and timeout > 0:
            self.now += timeout
        return ready

    def close(self) -> None:
        self._real.close()

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.get_key(fileobj)

    def get_map(self) -> Any:
        return self._real.get_map()


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """``loop.time()`` is virtual; ``asyncio.sleep`` returns as soon as nothing else can run."""

    def __init__(self) -> None:
        self._jumping = _JumpingSelector()
        super().__init__(self._jumping)

    def time(self) -> float:
        return self._jumping.now


def run_virtual(main: Awaitable[T]) -> T:
    """Run a coroutine to completion on a fresh :class:`VirtualTimeLoop`."""
    loop = VirtualTimeLoop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        asyncio.set_event_loop(None)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
