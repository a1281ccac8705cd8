"""An asyncio event loop whose clock jumps instead of waiting.

When nothing is ready to run, the loop advances its clock straight to the
next timer, so a test of a 15-second stream with 1.5 s edit intervals
runs in milliseconds and always sees the same times. Real I/O still works
(the selector is polled without blocking), and while work handed to
``run_in_executor`` (``asyncio.to_thread``: the openai SDK runs one call
there) is pending the clock stands still and the loop waits for real, so a
thread's few milliseconds never turn into a jump past every timeout. Tests
meant for virtual time should still stay in memory.
"""

from __future__ import annotations

import asyncio
import selectors
from concurrent.futures import Executor
from typing import Any, Awaitable, Callable, TypeVar, TypeVarTuple, Unpack

T = TypeVar("T")
_R = TypeVar("_R")
_Ts = TypeVarTuple("_Ts")


class _JumpingSelector(selectors.BaseSelector):
    """Delegates to a real selector; a timed wait with nothing ready moves the clock instead."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.now = 0.0
        self.threads = 0  # executor jobs in flight: time must not jump while one runs

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or self.threads:
            return self._real.select(timeout)  # only real I/O (or a finished thread) can wake us
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

    def run_in_executor(self, executor: Executor | None, func: Callable[[Unpack[_Ts]], _R],
                        *args: Unpack[_Ts]) -> asyncio.Future[_R]:
        future = super().run_in_executor(executor, func, *args)
        self._jumping.threads += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, _: asyncio.Future[Any]) -> None:
        self._jumping.threads -= 1


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
