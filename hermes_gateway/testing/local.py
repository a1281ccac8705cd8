"""What every emulator and end-to-end test of a platform plugin needs: a server on loopback, and a patient wait.

Tests here talk only to 127.0.0.1, on a port the system picks, and each
emulator of a platform is such a server; :func:`serve_locally` is the one
way they start. :func:`eventually` waits for what a person would see to
appear on an emulated screen, with a bound that only catches hangs.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from aiohttp import web


async def serve_locally(app: web.Application, **runner_options: Any) -> web.AppRunner:
    """Serve ``app`` on 127.0.0.1 on a free port; the port is ``runner.addresses[0][1]``.

    Stop it with ``await runner.cleanup()``. ``runner_options`` go to
    :class:`aiohttp.web.AppRunner` (``access_log`` defaults to None).
    """
    runner_options.setdefault("access_log", None)
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


async def eventually(condition: Callable[[], bool], what: Callable[[], Any], timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds; a generous bound that only catches hangs (then says ``what()``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"still not there after {timeout}s: {what()!r}")
        await asyncio.sleep(0.02)
