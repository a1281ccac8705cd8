"""Servers over HTTP (Streamable HTTP with headers, SSE for older servers), and a server that hangs at start."""

from __future__ import annotations

import json
import logging
import sys

from hermes_gateway._core.agent.results import ToolCall
from hermes_gateway._core.agent.tool_runner import run_tool
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.mcp.servers import McpServers
from mcp_helpers import http_server


def servers(*entries: dict, **options) -> McpServers:
    config = parse_config({"mcp_servers": list(entries)}, env={"KEY": "key-5up3r53cr3t"})
    options.setdefault("first_backoff", 0.2)
    return McpServers(config.mcp_servers, **options)


async def add(mcp: McpServers, name: str) -> str:
    tools = {tool.name: tool for tool in mcp.tools()}
    return (await run_tool(tools, ToolCall(call_id="c", name=name, arguments=json.dumps({"a": 3, "b": 4})))).result


async def test_streamable_http_sends_the_configured_headers():
    with http_server(authorization="Bearer key-5up3r53cr3t") as url:
        async with servers({"name": "web", "url": url, "headers": {"Authorization": "Bearer ${KEY}"}}) as mcp:
            assert await add(mcp, "web__add") == "7"


async def test_a_refused_header_is_one_line_without_the_secret(caplog):
    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    with http_server(authorization="Bearer something-else") as url:
        async with servers({"name": "web", "url": url, "headers": {"Authorization": "Bearer ${KEY}"}}) as mcp:
            assert mcp.tools() == [] and mcp.server("web").state == "down"
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].startswith("MCP server web failed to start")
    assert "key-5up3r53cr3t" not in caplog.text


async def test_an_older_server_over_sse():
    with http_server(sse=True) as url:
        async with servers({"name": "old", "url": url, "transport": "sse"}) as mcp:
            assert await add(mcp, "old__add") == "7"


async def test_a_server_that_never_answers_at_start_is_reported_as_hung(caplog):
    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    mute = {"name": "mute", "command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}
    async with servers(mute, connect_timeout=1.0, startup_wait=5) as mcp:
        assert mcp.tools() == [] and mcp.server("mute").state == "down"
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith("MCP server mute failed to start: it did not answer within 1s")
