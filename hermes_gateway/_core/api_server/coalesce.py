"""Write what is ready in one ``send``, and write it before waiting for anything more.

A streamed reply is relayed event by event. When the upstream delivers a
burst (a fast model, a proxy that buffers), one network read holds many
chunks; the agent decodes them all at once and hands them over without
ever waiting, and one ``send`` per chunk was a third of the gateway's CPU
per chunk (bench/README.md). The raw relay does one write per read.

:func:`next_event` gives the writer the agent's next event and tells it
*when the agent is about to wait*: it steps the agent's iterator by hand
and, at the moment the iterator would suspend (for the upstream, a tool, a
timer: anything), first awaits ``flush()``, then lets the iterator's wait
proceed. So frames of events that were ready together go out together, and
no frame is ever held while the gateway waits for the next token: each
token is on the wire before the next one exists in the gateway. A paced
stream (one chunk per read, the common case) still writes every event at
once, at the cost of one extra generator frame per wait.

If the flush fails (the client went away) or is cancelled, the parked
iterator is unwound with ``CancelledError`` at its wait, exactly as a
cancelled task would unwind it, so its ``finally`` blocks (closing the
upstream request) run before the error propagates.

The stream's first frames (the role chunk, ``response.created``) are held
(:meth:`Frames.hold`) until the agent's first event, or until the
keep-alive would first ping: the response's status is not sent before the
upstream accepted the request, so an upstream that refuses it (a 400, a
429) is answered with that status, not with a 200 and an error event.
"""

from __future__ import annotations

import asyncio
import types
from typing import Any, Awaitable, Callable, Generator, Protocol


@types.coroutine
def next_event(anext: Callable[[], Any], flush: Callable[[], Awaitable[None]] | None) -> Generator[Any, Any, Any]:
    """``await anext()``; but if it would wait and ``flush`` is given, ``await flush()`` first.

    Raises what ``anext()`` raises (``StopAsyncIteration`` at the end).
    """
    step = anext()
    try:
        yielded = step.send(None)
    except StopIteration as done:  # the next event was ready: no wait, nothing written
        return done.value
    if flush is not None:
        try:
            yield from flush().__await__()
        except BaseException:
            yield from _unwind(step)
            raise
    # Hand the iterator's wait over to the task (this is what ``await`` does, one level down).
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            step.close()
            raise
        except BaseException as exc:  # a cancellation thrown into the task lands in the iterator's wait
            try:
                yielded = step.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                yielded = step.send(sent)
            except StopIteration as done:
                return done.value


def _unwind(step: Any) -> Generator[Any, Any, None]:
    """End a parked ``anext()`` step as a cancellation would: ``CancelledError`` at its wait, driven to its end."""
    try:
        yielded = step.throw(asyncio.CancelledError())
    except BaseException:  # it ended (normally by re-raising the cancellation)
        return
    while True:  # its clean-up awaits something: let it
        try:
            sent = yield yielded
        except GeneratorExit:
            step.close()
            raise
        except BaseException as exc:
            try:
                yielded = step.throw(exc)
            except BaseException:
                return
        else:
            try:
                yielded = step.send(sent)
            except BaseException:
                return


class Sink(Protocol):
    """Where :class:`Frames` go: an ``SSEWriter`` (or a test's stand-in with ``write``)."""

    async def write(self, data: bytes, *, then_wait: bool = False) -> None: ...


#: At most this many frames go out in one write (fairness between bursting streams; see ``SSEWriter.write``).
MAX_COALESCED = 16


class Frames:
    """Frames waiting for the agent's next wait (or the end), and how many of them carry text."""

    __slots__ = ("sse", "on_text", "frames", "texts", "held", "wrote", "_hold_for", "_timer", "_opening")

    def __init__(self, sse: Sink, on_text: Callable[[int], None]) -> None:
        self.sse = sse
        self.on_text = on_text
        self.frames: list[str | bytes] = []
        self.texts = 0
        self.held = False     # nothing goes out before release() or the hold's end
        self.wrote = False    # something went out (the response's status with it)
        self._hold_for = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._opening: asyncio.Task[None] | None = None

    def hold(self, seconds: float) -> None:
        """Keep the frames until :meth:`release` (the agent's first event) or for ``seconds`` of waiting."""
        self.held = seconds > 0
        self._hold_for = seconds

    def release(self) -> None:
        """The agent answered: frames go out from the next flush on (the hold's timer is off)."""
        self.held = False
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        """The agent is done: the hold's timer is off (a write it began is awaited by the next flush or end,
        or, when the stream failed, its error is taken here rather than reported as never retrieved)."""
        self.release()
        if self._opening is not None:
            self._opening.add_done_callback(_retrieve)

    def _hold_ended(self) -> None:
        self._timer = None
        self.held = False
        self._opening = asyncio.get_running_loop().create_task(self._write_held(), name="sse-open")

    async def _write_held(self) -> None:
        data, texts = self._take()
        self.wrote = True
        await self.sse.write(data, then_wait=True)
        if texts:
            self.on_text(texts)

    async def _opened(self) -> None:
        """Wait for the hold's own write, so frames stay in order."""
        opening, self._opening = self._opening, None
        if opening is not None:
            await opening

    def add(self, frame: str | bytes, texts: int = 0) -> None:
        self.frames.append(frame)
        self.texts += texts

    def _take(self) -> tuple[bytes, int]:
        frames, texts = self.frames, self.texts
        self.frames, self.texts = [], 0
        if len(frames) == 1:  # a paced stream: one frame per write
            frame = frames[0]
            return frame if type(frame) is bytes else frame.encode(), texts  # type: ignore[return-value,union-attr]
        return b"".join(f if type(f) is bytes else f.encode() for f in frames), texts  # type: ignore[union-attr]

    async def flush(self, *, then_wait: bool = False) -> None:
        if self._opening is not None:
            await self._opened()
        data, texts = self._take()
        self.wrote = True
        await self.sse.write(data, then_wait=then_wait)
        if texts:
            self.on_text(texts)

    def flush_before_wait(self) -> Awaitable[None]:
        """:meth:`flush` when the agent is about to wait (``next_event``): the writer need not yield too.
        While held, the hold's timer starts instead (once)."""
        if self.held:
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self._hold_for, self._hold_ended)
            return _nothing()
        return self.flush(then_wait=True)

    async def end(self, tail: bytes, *, eof: bool = True) -> None:
        """The rest and ``tail``, with the end of the body when the writer can end it in the same send
        (``SSEWriter.end``); any other sink with a ``write`` gets a plain write. ``eof=False``: a plain
        write, the body stays open (the Responses writer stores the response before it ends the body)."""
        if self._opening is not None:
            await self._opened()
        data, texts = self._take()
        self.wrote = True
        end = getattr(self.sse, "end", None) if eof else None
        await (end(data + tail) if end is not None else self.sse.write(data + tail))
        if texts:
            self.on_text(texts)


async def _nothing() -> None:
    """An awaitable that does not wait (a held flush)."""


def _retrieve(task: "asyncio.Task[None]") -> None:
    if not task.cancelled():
        task.exception()
