"""Each enabled MCP server starts and lists its tools (then is stopped again)."""

from __future__ import annotations

import asyncio
import logging
import os

from ...config import Config
from ...mcp.server import UP, McpServer
from . import Line


async def check_mcp(config: Config, timeout: float) -> list[Line]:
    servers = [s for s in config.mcp_servers if s.enabled]
    if not servers:
        return []
    supervisor = logging.getLogger("hermes_gateway._core.mcp")
    level = supervisor.level
    supervisor.setLevel(logging.ERROR)  # its "failed to start ... retrying" warnings: the ✗ line says it once
    try:
        with open(os.devnull, "w") as quiet:  # a stdio server's own stderr (its traceback) is not doctor's output
            return list(await asyncio.gather(*(_one(s, timeout, quiet) for s in servers)))
    finally:
        supervisor.setLevel(level)


async def _one(settings: object, timeout: float, errlog: object) -> Line:
    server = McpServer(settings, errlog=errlog, connect_timeout=timeout)  # type: ignore[arg-type]
    key = f"mcp_servers.{server.name}"
    server.start()
    try:
        await server.wait_started(timeout)
        if server.state == UP:
            names = [t.name for t in server.listed]
            shown = ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
            return Line(True, key, f"started, {len(names)} tools ({shown or 'none'})")
        return Line(False, key, f"does not start: {server.reason or 'no answer within ' + format(timeout, 'g') + ' s'}"
                                "; check its command/url (hermes-gateway tools shows its state)")
    finally:
        await server.stop(timeout)
