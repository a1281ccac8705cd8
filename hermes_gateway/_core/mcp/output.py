"""What a stdio MCP server writes besides its answers, bounded in the gateway's log.

A server's stderr used to be the gateway's own (one call wrote 200 MB into
the log), and each stdout line that is not JSON-RPC became an ERROR with a
traceback from the SDK (10,000 junk lines: 10,000 tracebacks). Now stderr
comes through a pipe the gateway reads: each line cut at
:data:`STDERR_LINE_MAX` bytes, at most :data:`STDERR_LINES_PER_MINUTE` lines
a minute per server, and one line saying how many were dropped. Bad stdout
lines are counted: the first of a minute is shown (cut), the rest summed up
in one line when the minute is over or the connection ends.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import time
from typing import Callable, TextIO

log = logging.getLogger("hermes_gateway._core.mcp.server")

STDERR_LINE_MAX = 1024            # bytes of one stderr line that reach the log
STDERR_LINES_PER_MINUTE = 50      # stderr lines per server per minute that reach the log
WINDOW = 60.0                     # the minute the budgets above count in
_CHUNK = 64 * 1024

#: The server whose connection the current task serves (the SDK's stdout reader runs in a task it started).
CURRENT: contextvars.ContextVar["LineBudget | None"] = contextvars.ContextVar("mcp_server_stdout", default=None)


class LineBudget:
    """At most ``per_window`` lines shown per ``window`` seconds; the rest counted, then summed up in one line."""

    def __init__(self, server: str, what: str, per_window: int, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.server, self.what, self.per_window, self.window, self.clock = server, what, per_window, window, clock
        self.started = clock()
        self.shown = 0
        self.dropped = 0
        self.dropped_bytes = 0

    def take(self, size: int = 0) -> bool:
        """Whether one more line may be shown now (False: it is counted as dropped)."""
        if self.clock() - self.started >= self.window:
            self.flush()
            self.started, self.shown = self.clock(), 0
        if self.shown < self.per_window:
            self.shown += 1
            return True
        self.dropped += 1
        self.dropped_bytes += size
        return False

    def flush(self) -> None:
        """The line summing up what was dropped since the last one, if anything was."""
        if self.dropped:
            size = f" ({self.dropped_bytes:,} bytes)" if self.dropped_bytes else ""
            log.warning("MCP server %s: %d more %s%s dropped (at most %d a minute reach the log)",
                        self.server, self.dropped, self.what, size, self.per_window)
            self.dropped = self.dropped_bytes = 0


class StderrPipe:
    """A pipe for a stdio server's stderr (``errlog``), read by a task that logs its lines within the budget."""

    def __init__(self, server: str) -> None:
        read_fd, write_fd = os.pipe()
        self.errlog: TextIO = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        self.budget = LineBudget(server, "stderr lines", STDERR_LINES_PER_MINUTE)
        self.server = server
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._read(), name=f"mcp stderr {self.server}")

    async def close(self, drain: float = 0.5) -> None:
        """Our end closed; what the server wrote last is read for at most ``drain`` seconds, then the reading ends."""
        self.errlog.close()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=drain)
            if not done:  # the server (or a child of it) still holds the pipe open
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
        self._reader.close()  # (closed already by its transport once reading began)
        self.budget.flush()

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_CHUNK)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._reader)
        line, cut = b"", 0
        try:
            while chunk := await reader.read(_CHUNK):
                parts = chunk.split(b"\n")
                for i, part in enumerate(parts):
                    room = STDERR_LINE_MAX - len(line)
                    line, cut = line + part[:max(room, 0)], cut + max(len(part) - max(room, 0), 0)
                    if i < len(parts) - 1:  # the line ended
                        self._line(line, cut)
                        line, cut = b"", 0
            if line or cut:
                self._line(line, cut)
        finally:
            transport.close()

    def _line(self, line: bytes, cut: int) -> None:
        if not self.budget.take(len(line) + cut + 1):
            return
        text = line.decode("utf-8", "replace").rstrip()
        more = f" … ({cut:,} bytes cut)" if cut else ""
        log.info("MCP server %s stderr: %s%s", self.server, text, more)


class _BadStdoutLines(logging.Filter):
    """Turns the SDK's traceback per stdout line that is not JSON-RPC into a count per server (see module doc)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Failed to parse JSONRPC message"):
            return True
        budget = CURRENT.get()
        if budget is None:
            return True
        if budget.take():
            exc = record.exc_info[1] if record.exc_info else None
            detail = str(exc).replace("\n", " ")[:200] if exc is not None else ""
            log.warning("MCP server %s: a line on stdout that is not JSON-RPC was ignored (%s); more this minute "
                        "are counted", budget.server, detail)
        return False


_FILTER = _BadStdoutLines()


def watch_stdout(server: str) -> LineBudget:
    """Count ``server``'s bad stdout lines from the current task on (one shown a minute); the budget to flush."""
    sdk_log = logging.getLogger("mcp.client.stdio")
    if _FILTER not in sdk_log.filters:
        sdk_log.addFilter(_FILTER)
    budget = LineBudget(server, "lines on stdout that are not JSON-RPC", 1)
    CURRENT.set(budget)
    return budget
