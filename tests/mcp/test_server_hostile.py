"""A misbehaving stdio MCP server (tests/mcp/mcp_hostile_server.py) against the supervisor: what it writes on stderr
and stdout is bounded in the log, its tool list is not fetched again and again, an unknown tool name costs the
model five names at most, and a server that ignores the end of stdin and SIGTERM is ended within the bound."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path

from hermes_gateway._core.agent.results import ToolCall
from hermes_gateway._core.agent.tool_runner import run_tool
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.mcp import output, server as server_module
from hermes_gateway._core.mcp.servers import McpServers

HOSTILE = str(Path(__file__).with_name("mcp_hostile_server.py"))


def hostile(**env: str) -> McpServers:
    entry = {"name": "h", "command": sys.executable, "args": [HOSTILE], "env": env}
    config = parse_config({"mcp_servers": [entry]}, env={})
    return McpServers(config.mcp_servers, first_backoff=0.2, ping_interval=0.1)


async def call(mcp: McpServers, name: str, **arguments) -> object:
    tools = {tool.name: tool for tool in mcp.tools()}
    return await run_tool(tools, ToolCall(call_id="c1", name=name, arguments=json.dumps(arguments)))


async def eventually(check, within: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def gateway_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(("hermes_gateway", "mcp"))]


async def test_a_flood_on_stderr_reaches_the_log_cut_and_rate_limited_with_a_summary(caplog):
    caplog.set_level(logging.DEBUG)
    async with hostile() as mcp:
        outcome = await call(mcp, "h__flood_stderr", lines=5000, size=4000)  # ~20 MB
        assert outcome.result == "done"
    records = [r for r in gateway_lines(caplog) if "h stderr" in r.getMessage() or "dropped" in r.getMessage()]
    logged = sum(len(r.getMessage()) for r in records)
    assert len(records) <= output.STDERR_LINES_PER_MINUTE + 2
    assert all(len(r.getMessage()) <= output.STDERR_LINE_MAX + 100 for r in records)
    assert logged < 200_000
    summary = next(r.getMessage() for r in records if "dropped" in r.getMessage())
    assert "MCP server h: " in summary and "stderr lines" in summary


async def test_junk_on_stdout_is_counted_in_one_line_not_a_traceback_each(caplog):
    caplog.set_level(logging.DEBUG)
    async with hostile() as mcp:
        outcome = await call(mcp, "h__junk_stdout", lines=2000)
        assert outcome.ok and outcome.result == "done"
        assert (await call(mcp, "h__echo", text="still here")).result == "still here"
    records = gateway_lines(caplog)
    assert not any(r.exc_info for r in records), [r.getMessage() for r in records if r.exc_info][:2]
    junk = [r.getMessage() for r in records if "not JSON-RPC" in r.getMessage() or "junk" in r.getMessage()]
    assert len(junk) == 2, junk  # the first line shown, then the count of the rest
    assert "MCP server h:" in junk[0] and "junk line 0" in junk[0]
    assert junk[1].startswith("MCP server h: 1999 more lines on stdout that are not JSON-RPC dropped")


async def test_the_tool_list_is_fetched_again_only_when_the_server_says_it_changed(tmp_path):
    lists = tmp_path / "lists.txt"
    async with hostile(HOSTILE_LISTS=str(lists), HOSTILE_TOOLS="3") as mcp:
        first = lists.read_text().count("list")
        server = mcp.server("h")
        pings = server.pings
        await eventually(lambda: server.pings >= pings + 10)  # ten health checks (every 0.1 s)
        assert lists.read_text().count("list") == first
        assert "h__added" not in {t.name for t in mcp.tools()}
        await call(mcp, "h__change")
        await eventually(lambda: "h__added" in {t.name for t in mcp.tools()})
        assert lists.read_text().count("list") == first + 1


async def test_an_unknown_tool_names_at_most_five_close_matches():
    async with hostile(HOSTILE_TOOLS="20000") as mcp:
        tools = {tool.name: tool for tool in mcp.tools()}
        assert len(tools) > 20000
        outcome = await run_tool(tools, ToolCall(call_id="c1", name="h__t1234x", arguments="{}"))
    assert not outcome.ok
    assert len(outcome.result) < 400, outcome.result
    assert outcome.result.startswith("Error: unknown tool 'h__t1234x'.")
    assert "h__t1234" in outcome.result and outcome.result.count("h__") <= 6


async def test_a_server_that_ignores_eof_and_sigterm_is_stopped_within_the_bound():
    mcp = hostile(HOSTILE_STUBBORN="1")
    await mcp.start()
    assert (await call(mcp, "h__echo", text="up")).result == "up"
    began = time.monotonic()
    await mcp.stop()
    took = time.monotonic() - began
    assert took <= server_module.STOP_TIMEOUT + 1.0, took


async def test_the_gateway_stops_within_its_grace_plus_five_seconds_with_a_stubborn_server():
    from hermes_gateway.testing import TestGateway

    entry = {"name": "h", "command": sys.executable, "args": [HOSTILE], "env": {"HOSTILE_STUBBORN": "1"}}
    gateway = TestGateway({"mcp_servers": [entry]}, shutdown_grace=1.0)
    await gateway.start()
    began = time.monotonic()
    await gateway.stop()
    assert time.monotonic() - began <= 1.0 + 5.0
