"""Every configured MCP server together: started with the gateway (or the terminal chat), one task each.

:class:`McpServers` is one live tool source for a
:class:`~hermes_gateway._core.toolbox.ToolBox`: its ``version`` changes
whenever any server's tools come or go. Starting waits a little for the
servers' first connection (so the first message already sees their tools)
but never fails: a server that cannot start is reported by its own
supervisor and retried in the background.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence, TextIO

from ..tools import Tool
from .server import McpServer
from ..settings.mcp import McpServerSettings

#: How long start-up waits for the servers' first connection before going on without them.
STARTUP_WAIT = 15.0


class McpServers:
    """The enabled servers of ``mcp_servers`` (the disabled ones are kept to be listed)."""

    def __init__(self, settings: Sequence[McpServerSettings], *, errlog: TextIO | None = None,
                 startup_wait: float = STARTUP_WAIT, **server_options: Any) -> None:
        self.settings = tuple(settings)
        self.servers = [McpServer(s, errlog=errlog, **server_options) for s in self.settings if s.enabled]
        self.disabled = [s for s in self.settings if not s.enabled]
        self.startup_wait = startup_wait
        self._running = False

    @property
    def version(self) -> int:
        """Changes whenever a server's tools change (each server's counter only grows)."""
        return sum(server.version for server in self.servers)

    def tools(self) -> list[Tool]:
        """The tools of the servers that are up now, server by server."""
        return [tool for server in self.servers for tool in server.tools()]

    def server(self, name: str) -> McpServer | None:
        return next((server for server in self.servers if server.name == name), None)

    async def start(self) -> None:
        """Start each server in its own task; wait (bounded) for their first connection attempts."""
        if self._running or not self.servers:
            return
        self._running = True
        for server in self.servers:
            server.start()
        await asyncio.gather(*(server.wait_started(self.startup_wait) for server in self.servers))

    async def stop(self) -> None:
        """Close every connection (stdio servers' processes end). Safe to call twice."""
        if not self._running:
            return
        self._running = False
        await asyncio.gather(*(server.stop() for server in self.servers))

    async def __aenter__(self) -> "McpServers":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
