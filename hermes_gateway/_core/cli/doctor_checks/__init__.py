"""The checks of ``hermes-gateway doctor``: each one async, bounded in time, answering in :class:`Line`\\ s.

One module per kind of thing checked (the model's upstream and the clock,
the store and media directory, Redis and the API port, MCP servers, each
platform through its plugin's ``Platform.doctor``). A check never raises:
whatever goes wrong becomes a failing line that says what to fix.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Awaitable, Callable

from ...config import Config
from ...secrets import scrub

#: Seconds one check may take, unless the command line says otherwise.
DEFAULT_TIMEOUT = 5.0


@dataclass(frozen=True)
class Line:
    """One line of the report: ✓ or ✗, what was checked (a config key where there is one), what was found."""

    ok: bool
    subject: str
    text: str

    def __str__(self) -> str:
        return scrub(f"{'✓' if self.ok else '✗'} {self.subject}: {self.text}")


Check = Callable[[Config, float], Awaitable[list[Line]]]


async def bounded(subject: str, check: Check, config: Config, timeout: float) -> list[Line]:
    """``check``'s lines, or one failing line when it takes longer than ``timeout`` or breaks."""
    try:
        async with asyncio.timeout(timeout + 1.0):  # the check bounds its own calls by ``timeout``; this is the net
            return await check(config, timeout)
    except TimeoutError:
        return [Line(False, subject, f"no answer within {timeout:g} s (is it up and reachable from here?)")]
    except Exception as exc:  # a check's own bug must not hide the other lines
        return [Line(False, subject, f"the check failed: {type(exc).__name__}: {exc}")]
