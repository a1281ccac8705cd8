"""An upstream request whose bytes leave in the step that sends it, not one event-loop pass later.

aiohttp buffers a request's headers and writes them with the body from a
task (``ClientRequest.write_bytes``). From Python 3.12 it starts that task
eagerly; on 3.11 the task waits for the next pass of the event loop, behind
everything already queued. In a burst of 200 requests that is every other
handler's work up to its own upstream send: the first upstream request left
only after the 200th handler had run, and the upstream (on another core)
sat idle meanwhile. :class:`EagerBodyRequest` runs ``write_bytes`` at once
up to its first real wait (a small JSON body never waits: the headers and
body go out in one ``writelines``) and leaves only the rest, if any, to the
task. Nothing changes on the wire; only when it is written.
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine, Generator
from typing import Any

import aiohttp

#: Python versions where aiohttp already starts the body writer eagerly.
NEEDED = sys.version_info < (3, 12)


class EagerBodyRequest(aiohttp.ClientRequest):
    """``aiohttp.ClientRequest`` whose body writer runs up to its first wait when it is created."""

    def write_bytes(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, None]:  # type: ignore[override]
        return started(super().write_bytes(*args, **kwargs))


def started(coro: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
    """Run ``coro`` now up to its first wait; a coroutine that finishes it (or returns at once)."""
    try:
        pending = coro.send(None)
    except StopIteration as stop:
        return _finished(stop.value)
    except BaseException as exc:  # raised before its first wait: raised where the task would have raised it
        return _raised(exc)
    return _continued(coro, pending)


async def _finished(value: Any) -> Any:
    return value


async def _raised(exc: BaseException) -> Any:
    raise exc


async def _continued(coro: Coroutine[Any, Any, Any], pending: Any) -> Any:
    return await _Resume(coro, pending)


class _Resume:
    """Awaiting this goes on driving ``coro`` from where :func:`started` left it (what ``yield from`` does)."""

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coro = coro
        self.pending = pending

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, pending = self.coro, self.pending
        while True:
            try:
                sent = yield pending
            except BaseException as exc:  # a cancellation (or close) of the waiting task goes to the writer
                try:
                    pending = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = coro.send(sent)
                except StopIteration as stop:
                    return stop.value
