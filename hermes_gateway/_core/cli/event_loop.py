"""Which event loop ``hermes-gateway run`` serves on: uvloop when it is installed, as uvicorn does.

Every streamed reply is socket reads and writes on one event loop, and
asyncio's own loop does each of them in Python (the selector, the
transports, the callbacks). uvloop is the same ``asyncio`` API on libuv:
measured on the API server's benchmark (bench/README.md), the gateway spent
about a quarter less CPU per streamed request on it, which is what a burst
of new streams waits for before its first tokens. Nothing else changes: the
gateway, aiohttp and the plugins only use the ``asyncio`` API.

``--loop auto`` (the default) takes uvloop when it can be imported (it is
installed with the gateway on Linux and macOS) and asyncio's loop otherwise;
``--loop asyncio`` keeps asyncio's (e.g. to rule the loop out when
debugging); ``--loop uvloop`` insists, and says so in one line when uvloop
is missing. Only ``run``: the library, the terminal chat and the tests keep
whatever loop their caller has.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from ..errors import HermesError

CHOICES = ("auto", "asyncio", "uvloop")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


class LoopUnavailable(HermesError):
    """``--loop uvloop`` on a machine without uvloop."""


def choose_loop(choice: str) -> tuple[LoopFactory | None, str]:
    """The loop factory for ``asyncio.Runner`` (None: asyncio's default) and the loop's name."""
    if choice not in CHOICES:
        raise ValueError(f"unknown event loop {choice!r}; expected one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None, "asyncio"
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable("--loop uvloop: uvloop is not installed here (pip install uvloop), "
                                  "or use --loop asyncio") from None
        return None, "asyncio"
    return uvloop.new_event_loop, "uvloop"
