"""Each enabled MCP server starts and lists its tools (then is stopped again)."""

from __future__ import annotations

import asyncio
import io

from ...config import Config
from ...mcp.server import UP, McpServer
from . import Line


async def check_mcp(config: Config, timeout: float) -> list[Line]:
    servers = [s for s in config.mcp_servers if s.enabled]
    return list(await asyncio.gather(*(_one(s, timeout) for s in servers)))


async def _one(settings: object, timeout: float) -> Line:
    server = McpServer(settings, errlog=io.StringIO(), connect_timeout=timeout)  # type: ignore[arg-type]
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
