"""The daemon's ``GET /api/v1/events``: Server-Sent Events read within bounds, reconnected when they stop.

signal-cli sends each received envelope as ``event:receive`` with
``data:{"envelope":…,"account":…}`` and an ``id:``, and a ``:`` keep-alive
every 15 s (``http/HttpServerHandler.java``); a client reconnecting with
``Last-Event-ID`` first gets the events it missed (``http/SseEventBuffer.java``,
the last 1000). :class:`EventStream` keeps that id in the gateway's store
(``context.set_value``), so a restarted gateway also gets what arrived while it
was down; the core's dedupe (by ``update_id``) drops what it already answered.

Everything from the daemon is bounded: a line or an event over
:data:`MAX_EVENT_BYTES` is dropped whole (one log line), a payload that is not
a JSON object is skipped (one log line), and a stream silent for
:data:`SILENCE` seconds (three keep-alives missed) is reconnected.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Awaitable, Callable

import aiohttp

from hermes_gateway import PlatformContext, scrub_secrets

from .settings import SignalSettings

log = logging.getLogger(__name__)

EVENTS_PATH = "/api/v1/events"
#: An envelope is small (a text is at most 2000 bytes; files are ids): anything near this is not one.
MAX_EVENT_BYTES = 256 * 1024
#: signal-cli sends a keep-alive every 15 s; three missed mean the stream is dead.
SILENCE = 45.0
#: Reconnect waits: first, and at most (doubling in between).
FIRST_RETRY = 0.2
MAX_RETRY = 10.0
LAST_EVENT_KEY = "sse_last_event_id"


class SseParser:
    """Bytes in, complete events out: ``(id, event, data)``; over-long lines and events are dropped whole."""

    def __init__(self, max_bytes: int = MAX_EVENT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buffer = b""
        self._discarding = False          # inside a line that was too long: drop up to its end
        self._too_big = False             # the current event lost a line: drop it at its blank line
        self._data: list[str] = []
        self._size = 0
        self._id: str | None = None
        self._event = "message"
        self.dropped = 0

    def feed(self, chunk: bytes) -> list[tuple[str | None, str, str]]:
        events: list[tuple[str | None, str, str]] = []
        self._buffer += chunk
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > self.max_bytes:
                    self._buffer, self._discarding = b"", True
                return events
            line, self._buffer = self._buffer[:end], self._buffer[end + 1:]
            if self._discarding:
                self._discarding, self._too_big = False, True
                continue
            event = self._line(line.rstrip(b"\r").decode("utf-8", "replace"))
            if event is not None:
                events.append(event)

    def _line(self, line: str) -> tuple[str | None, str, str] | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._size += len(value) + 1
            if self._size > self.max_bytes:
                self._too_big = True
                self._data = []
            elif not self._too_big:
                self._data.append(value)
        elif name == "id":
            self._id = value
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> tuple[str | None, str, str] | None:
        data, event, too_big = "\n".join(self._data), self._event, self._too_big
        self._data, self._size, self._event, self._too_big = [], 0, "message", False
        if too_big:
            self.dropped += 1
            log.warning("signal: an event from the daemon over %d bytes was dropped", self.max_bytes)
            return None
        return (self._id, event, data) if data else None


class EventStream:
    """Reads the daemon's events until stopped, reconnecting; hands each payload to ``handle``."""

    def __init__(self, settings: SignalSettings, context: PlatformContext, session: Callable[[], aiohttp.ClientSession],
                 handle: Callable[[dict[str, Any]], Awaitable[None]],
                 connected: Callable[[], Awaitable[None]] | None = None) -> None:
        self.settings = settings
        self._connected = connected
        self.context = context
        self._session = session
        self._handle = handle
        self._task: asyncio.Task[None] | None = None
        self.last_event_id: str | None = None

    async def start(self) -> None:
        try:
            stored = await self.context.get_value(LAST_EVENT_KEY, None)
        except Exception:  # the store is down: start from now, the daemon's buffer still helps on reconnects
            stored = None
        self.last_event_id = stored if isinstance(stored, str) else None
        self._task = asyncio.get_running_loop().create_task(self._run(), name="signal-events")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def _run(self) -> None:
        wait = FIRST_RETRY
        while True:
            try:
                await self._read_once()
                why = "the event stream ended"
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                why = f"no event or keep-alive for {SILENCE:g}s"
            except aiohttp.ClientConnectorError:
                why = "the daemon is not reachable"
            except Exception as exc:
                why = scrub_secrets(f"{type(exc).__name__}: {exc}")[:200]
            else:
                wait = FIRST_RETRY
            self.context.report_disconnected(f"signal-cli daemon at {self.settings.url}: {why}")
            await asyncio.sleep(wait)
            wait = min(wait * 2, MAX_RETRY)

    async def _read_once(self) -> None:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = self.last_event_id
        url = f"{self.settings.url}{EVENTS_PATH}"
        async with asyncio.timeout(SILENCE) as deadline:
            async with self._session().get(url, headers=headers, params={"account": self.settings.account},
                                           timeout=aiohttp.ClientTimeout(total=None, sock_read=SILENCE)) as response:
                if response.status != 200:
                    raise ConnectionError(f"the daemon answered HTTP {response.status} on {EVENTS_PATH}")
                self.context.report_connected()
                if self._connected is not None:
                    await self._connected()
                parser = SseParser()
                loop = asyncio.get_running_loop()
                async for chunk in response.content.iter_any():
                    deadline.reschedule(loop.time() + SILENCE)
                    for event_id, name, data in parser.feed(chunk):
                        if name == "receive":
                            await self._payload(data)
                        if event_id:
                            await self._remember(event_id)

    async def _payload(self, data: str) -> None:
        try:
            payload = json.loads(data)
        except ValueError:
            log.warning("signal: skipped an event from the daemon that is not JSON (%d bytes)", len(data))
            return
        if not isinstance(payload, dict):
            log.warning("signal: skipped an event from the daemon that is not a JSON object")
            return
        try:
            await self._handle(payload)
        except Exception as exc:  # one bad envelope costs one line, never the stream
            log.warning("signal: skipped an envelope the plugin could not read (%s)",
                        scrub_secrets(f"{type(exc).__name__}: {exc}")[:200])

    async def _remember(self, event_id: str) -> None:
        if event_id == self.last_event_id or len(event_id) > 100:
            return
        self.last_event_id = event_id
        try:
            await self.context.set_value(LAST_EVENT_KEY, event_id)
        except Exception as exc:
            log.info("signal: could not keep the event position (%s)", type(exc).__name__)
