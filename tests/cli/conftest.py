"""A real terminal for the chat: the program runs on a pty (pexpect), its output is drawn by pyte.

Tests look at the screen a person would see and wait for text to appear
with generous deadlines (the machine may be loaded), never sleep-then-assert.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable

import pexpect
import pyte
import pytest

from cli_helpers import COLS, DEADLINE, ROWS, child_env, write_config  # noqa: F401


class _Screen(pyte.Screen):
    """Answers the program's cursor-position requests, as a real terminal emulator does."""

    reply_to_program: Callable[[str], None] | None = None

    def write_process_input(self, data: str) -> None:
        if self.reply_to_program is not None:
            self.reply_to_program(data)


class Terminal:
    """One program on a pty, with the screen it has drawn so far."""

    def __init__(self, args: list[str], *, env: dict[str, str], cwd: Path) -> None:
        self.screen = _Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(sys.executable, ["-m", "hermes_gateway", *args], env=env, cwd=str(cwd),
                                   dimensions=(ROWS, COLS))  # echo on, like a real terminal
        self.screen.reply_to_program = self.child.send
        self.raw = b""

    # -- reading -------------------------------------------------------------------------------

    def pump(self, wait: float = 0.05) -> bool:
        """Feed whatever the program wrote to the screen; False once it has exited."""
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines()).rstrip()

    def wait_for(self, condition: Callable[[str], bool] | str, timeout: float = DEADLINE) -> str:
        """Pump until ``condition(screen_text)`` holds (or the text appears); fail with the screen."""
        check = (lambda text: condition in text) if isinstance(condition, str) else condition
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if check(text):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {condition!r}; the screen shows:\n{text}")
            if not self.pump(0.05):
                text = self.text()
                if check(text):
                    return text
                pytest.fail(f"the program exited while waiting for {condition!r}; the screen shows:\n{text}")

    # -- writing -------------------------------------------------------------------------------

    def type(self, text: str) -> None:
        self.child.send(text)

    def enter(self, text: str) -> None:
        self.child.send(text + "\r")

    def ctrl(self, key: str) -> None:
        self.child.sendcontrol(key)

    def wait_output_end(self, timeout: float = DEADLINE) -> None:
        """Pump until the program has closed the terminal (it exited)."""
        deadline = time.monotonic() + timeout
        while self.pump(0.1):
            if time.monotonic() > deadline:
                pytest.fail(f"the program did not exit; the screen shows:\n{self.text()}")

    def wait_exit(self, timeout: float = DEADLINE) -> int:
        self.wait_output_end(timeout)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -(self.child.signalstatus or 0)

    def kill(self) -> None:
        """Stop the program if a failed test left it running, and close the pty."""
        if not self.child.closed:
            self.child.close(force=True)


@pytest.fixture
def terminal(tmp_path):
    """Start ``hermes-gateway ARGS...`` in a real terminal; killed at the end of the test."""
    started: list[Terminal] = []
    home = tmp_path / "home"
    home.mkdir()

    def start(*args: str) -> Terminal:
        term = Terminal(list(args), env=child_env(home), cwd=tmp_path)
        started.append(term)
        return term

    yield start
    for term in started:
        term.kill()


class RecordedUpstream:
    """The demo model served over real HTTP (the project's own demo-llm app), in a thread of the test.

    Each model request is recorded with how it ended: ``completed``, or
    ``client went away`` when the client closed the connection mid-reply.
    """

    def __init__(self, tokens_per_second: float, *, drop_first_stream_after: int | None = None) -> None:
        import asyncio
        import threading

        self.requests: list[dict] = []
        self.drop_first_stream_after = drop_first_stream_after  # frames, then the connection is cut
        self.base_url = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._tokens_per_second = tokens_per_second
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(DEADLINE):
            raise RuntimeError("the demo upstream did not start")

    def _run(self) -> None:
        import asyncio

        from aiohttp import web

        from hermes_gateway._core.demo.server import CLIENT_WENT_AWAY, make_app

        requests = self.requests

        @web.middleware
        async def record(request, handler):
            body = await request.read()  # cached: the handler reads it again
            entry = {"path": request.path, "outcome": "running",
                     "body": json.loads(body) if body else None}
            requests.append(entry)
            try:
                response = await handler(request)
            except (ConnectionResetError, asyncio.CancelledError):
                entry["outcome"] = "client went away"
                raise
            entry["outcome"] = "client went away" if request.get(CLIENT_WENT_AWAY) else "completed"
            return response

        async def main() -> None:
            app = make_app(self._tokens_per_second) if self.drop_first_stream_after is None else self._dropping_app()
            app.middlewares.append(record)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]
            self.base_url = f"http://127.0.0.1:{port}/v1"
            self._ready.set()

        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(main())
        self._loop.run_forever()

    def _dropping_app(self):
        """The demo model, except that the first streamed reply loses its connection part-way."""
        from aiohttp import web

        from hermes_gateway._core.demo.endpoint import DemoEndpoint

        endpoint = DemoEndpoint(self._tokens_per_second)

        async def handle(request):
            result = await endpoint.handle(request.method, request.path, await request.read())
            if not result.streaming:
                return web.Response(status=result.status, body=result.body, headers=result.headers)
            response = web.StreamResponse(status=result.status, headers=result.headers)
            await response.prepare(request)
            frames = 0
            async for frame in result.body:
                await response.write(frame)
                frames += 1
                if self.drop_first_stream_after is not None and frames >= self.drop_first_stream_after:
                    self.drop_first_stream_after = None
                    request.transport.close()
                    return response
            await response.write_eof()
            return response

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        return app

    def close(self) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(DEADLINE)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(DEADLINE)


@pytest.fixture
def demo_upstream():
    started: list[RecordedUpstream] = []

    def start(tokens_per_second: float, **options) -> RecordedUpstream:
        upstream = RecordedUpstream(tokens_per_second, **options)
        started.append(upstream)
        return upstream

    yield start
    for upstream in started:
        upstream.close()
