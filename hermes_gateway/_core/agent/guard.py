"""Cutting an upstream await short: interruption and the first-token/stall timeouts.

The agent reads the upstream inside the consumer's own task (``astream`` is
an async generator), so stopping a read means cancelling that task while it
waits on the upstream, and only then. :class:`ReadGuard` does exactly that:
``wait()`` marks the await as cuttable; ``interrupt()`` or a passed deadline
cancels the task, and ``wait()`` turns the cancellation back into
:class:`Interrupted` or :class:`UpstreamTimeout` (``Task.uncancel``), so a
cancellation that came from outside still propagates untouched.

Deadlines cost one float store per chunk: the single timer is lazy and only
re-arms itself when it fires early, never per chunk.
"""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Awaitable, TypeVar

from ..errors import HermesError

T = TypeVar("T")


class Interrupted(HermesError):
    """The turn was interrupted (``AIAgent.interrupt()``)."""


class UpstreamTimeout(HermesError):
    """The upstream said nothing for too long (connect, first token or stall)."""


class ReadGuard:
    """Per-turn: runs upstream awaits so that an interrupt or a deadline can cut them."""

    __slots__ = ("loop", "task", "active", "deadline", "what", "interrupted", "_reason", "_handle", "_thread")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task | None = None
        self.active = False
        self.deadline = math.inf
        self.what = ""
        self.interrupted = False
        self._reason: str | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._thread = threading.get_ident()

    async def wait(self, awaitable: Awaitable[T], deadline: float, what: str) -> T:
        """Await ``awaitable``; raise Interrupted/UpstreamTimeout if cut, else return its result."""
        try:
            self.enter(deadline, what)
        except Interrupted:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()
            raise
        try:
            return await awaitable
        except asyncio.CancelledError:
            self.active = False
            error = self.cut_error()
            if error is None:
                raise
            raise error from None
        finally:
            self.active = False

    def enter(self, deadline: float, what: str) -> None:
        """Start a cuttable upstream wait (the hot loop inlines ``wait()`` with this).

        The caller must set ``active = False`` when the await ends, however
        it ends, and turn a ``CancelledError`` into :meth:`cut_error`.
        """
        if self.interrupted:
            raise Interrupted()
        self.deadline = deadline
        self.what = what
        handle = self._handle
        if deadline != math.inf and (handle is None or handle.when() > deadline):
            if handle is not None:
                handle.cancel()
            self._handle = self.loop.call_at(deadline, self._fire)
        if self.task is None:
            self.task = asyncio.current_task()
        self.active = True

    def cut_error(self) -> Exception | None:
        """What a ``CancelledError`` caught during a wait means: ours (Interrupted, a timeout),
        or None when it came from outside and must propagate unchanged."""
        reason, task = self._reason, self.task
        if reason is None or task is None:
            return None
        self._reason = None
        task.uncancel()
        if task.cancelling():  # someone else cancelled us too: let that win
            return None
        if reason == "interrupt":
            return Interrupted()
        return UpstreamTimeout(self.what)

    def interrupt(self) -> None:
        """Stop the turn: cut the current upstream await now, refuse later ones. Thread-safe."""
        if threading.get_ident() != self._thread:
            try:
                self.loop.call_soon_threadsafe(self.interrupt)
            except RuntimeError:  # the loop is closed: the turn is long over
                pass
            return
        self.interrupted = True
        if self.active:
            self._cut("interrupt")

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if not self.active or self.deadline == math.inf:
            return  # not waiting on the upstream: the next wait() re-arms
        if self.loop.time() < self.deadline:
            self._handle = self.loop.call_at(self.deadline, self._fire)
            return
        self._cut("timeout")

    def _cut(self, reason: str) -> None:
        if self._reason is None and self.task is not None:
            self._reason = reason
            self.task.cancel()
