"""One MCP server's supervisor against a real stdio server: tools, calls, media, errors, timeouts, death and return."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal

from hermes_gateway._core.agent.results import ToolCall
from hermes_gateway._core.agent.tool_runner import run_tool
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.mcp.servers import McpServers
from mcp_helpers import stdio_entry


def servers(*entries: dict, **options) -> McpServers:
    config = parse_config({"mcp_servers": list(entries)}, env={})
    options.setdefault("first_backoff", 0.2)
    options.setdefault("ping_interval", 0.2)
    return McpServers(config.mcp_servers, **options)


async def call(mcp: McpServers, name: str, **arguments) -> object:
    tools = {tool.name: tool for tool in mcp.tools()}
    return await run_tool(tools, ToolCall(call_id="c1", name=name, arguments=json.dumps(arguments)))


async def eventually(check, within: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_tools_are_named_server__tool_with_the_servers_schemas_and_deny_hides_one():
    async with servers(stdio_entry(tools={"deny": ["fail"]})) as mcp:
        tools = {tool.name: tool for tool in mcp.tools()}
        assert set(tools) == {"demo__add", "demo__whoami", "demo__slow", "demo__square"}
        assert tools["demo__add"].parameters["properties"].keys() == {"a", "b"}
        assert tools["demo__add"].parameters["required"] == ["a", "b"]
        assert "Add two whole numbers" in tools["demo__add"].description


async def test_a_call_returns_its_text_env_reaches_the_server_and_an_error_is_an_error_result():
    async with servers(stdio_entry(env={"DEMO_GREETING": "bonjour"})) as mcp:
        outcome = await call(mcp, "demo__add", a=2, b=40)
        assert (outcome.ok, outcome.result) == (True, "42")
        assert "says bonjour" in (await call(mcp, "demo__whoami")).result
        failed = await call(mcp, "demo__fail")
        assert not failed.ok and failed.result.startswith("Error: demo__fail failed")


async def test_an_image_in_the_result_becomes_media_and_the_model_reads_its_stand_in():
    async with servers(stdio_entry()) as mcp:
        outcome = await call(mcp, "demo__square")
        assert outcome.ok and len(outcome.media) == 1
        assert outcome.media[0].kind == "image" and outcome.media[0].data.startswith(b"\x89PNG")
        assert outcome.result == "[image: file.png attached]"


async def test_a_call_that_outlasts_the_timeout_is_an_error_result_and_the_server_stays_up():
    async with servers(stdio_entry(timeout=0.5)) as mcp:
        outcome = await call(mcp, "demo__slow", seconds=5)
        assert not outcome.ok and "did not answer within 0.5 seconds" in outcome.result
        assert (await call(mcp, "demo__add", a=1, b=1)).result == "2"


async def test_a_server_that_cannot_start_is_one_line_and_the_others_still_serve(caplog):
    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    broken = {"name": "broken", "command": "/nonexistent/mcp-server"}
    async with servers(broken, stdio_entry()) as mcp:
        assert {tool.name.split("__")[0] for tool in mcp.tools()} == {"demo"}
        assert mcp.server("broken").state == "down"
        await asyncio.sleep(1.0)  # several retries meanwhile: still one line
    lines = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert lines == ["MCP server broken failed to start: command not found: /nonexistent/mcp-server; its tools are "
                     "unavailable until it is back (retrying in 0.2s)"]


async def test_a_killed_server_loses_its_tools_and_gets_them_back_after_the_restart_one_line_each_way(caplog):
    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    async with servers(stdio_entry()) as mcp:
        before = (await call(mcp, "demo__whoami")).result
        pid = int(before.split()[1])
        os.kill(pid, signal.SIGKILL)
        await eventually(lambda: not mcp.tools())
        gone = await run_tool({}, ToolCall(call_id="c2", name="demo__whoami", arguments="{}"))
        assert gone.result.startswith("Error: unknown tool")
        await eventually(lambda: len(mcp.tools()) == 5)
        after = (await call(mcp, "demo__whoami")).result
        assert int(after.split()[1]) != pid
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("MCP server demo stopped working:")
    assert warnings[1] == "MCP server demo is back: 5 tools"


async def test_stopping_ends_the_stdio_process():
    mcp = servers(stdio_entry())
    await mcp.start()
    pid = int((await call(mcp, "demo__whoami")).result.split()[1])
    await mcp.stop()
    await eventually(lambda: not _alive(pid), within=10)
    assert mcp.tools() == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


async def test_a_server_that_hangs_mid_session_is_replaced_one_line_each_way(caplog):
    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    async with servers(stdio_entry(), ping_timeout=1.0) as mcp:
        pid = int((await call(mcp, "demo__whoami")).result.split()[1])
        os.kill(pid, signal.SIGSTOP)  # alive, but answers nothing
        try:
            await eventually(lambda: not mcp.tools())
            await eventually(lambda: len(mcp.tools()) == 5)
        finally:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        assert int((await call(mcp, "demo__whoami")).result.split()[1]) != pid
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings[0] == ("MCP server demo stopped working: it did not answer within 1s; its tools are unavailable "
                           "until it is back (retrying in 0.2s)")
    assert warnings[1:] == ["MCP server demo is back: 5 tools"]
