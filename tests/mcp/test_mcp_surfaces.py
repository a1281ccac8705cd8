"""MCP tools that the demo model calls by name, on the terminal (stdio server), the API (Streamable HTTP) and a platform.

The servers are small ones written with the ``mcp`` SDK (``mcp_demo_server.py``):
one as a subprocess over stdio, one over Streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import yaml

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.media import MediaLimits
from hermes_gateway._core.plugins import make_plugins
from inbound_helpers import People, make_gateway, reference, visible
from mcp_helpers import http_server, stdio_entry


def test_the_terminal_chat_calls_a_stdio_servers_tool(tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"mcp_servers": [stdio_entry(env={"DEMO_GREETING": "hi"})]}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path), HERMES_HOME=str(tmp_path / "data"))
    done = subprocess.run([sys.executable, "-m", "hermes_gateway._core.cli.main", "chat", "--config", str(config),
                           "-m", 'tool: demo__add {"a": 2, "b": 40}'], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The tool demo__add returned: 42\n"


async def test_the_api_calls_a_streamable_http_servers_tool():
    with http_server() as url:
        config = parse_config({"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}},
                               "mcp_servers": [{"name": "web", "url": url}]}, env={})
        async with Gateway(config, make_plugins(load_entry_points=False), shutdown_grace=2.0) as gateway:
            body = {"model": "hermes-gateway", "messages": [{"role": "user", "content": 'tool: web__add {"a": 5, "b": 6}'}]}
            async with aiohttp.ClientSession() as http:
                async with http.post(f"{gateway.url}/v1/chat/completions", json=body) as response:
                    assert response.status == 200
                    answer = await response.json()
    assert answer["choices"][0]["message"]["content"] == "The tool web__add returned: 11"


async def test_a_chat_on_the_reference_platform_gets_a_stdio_servers_text_and_image():
    ref = reference(media=MediaLimits(max_bytes={"default": 10_000_000}))
    gateway = make_gateway(ref, tokens_per_second=0, mcp_servers=[stdio_entry()])
    async with gateway:
        people = People(gateway)
        await asyncio.wait_for(people.say("7", 'tool: demo__add {"a": 1, "b": 2}'), 60)
        await asyncio.wait_for(people.say("8", "tool: demo__square {}"), 60)
    assert visible(ref, "7") == ["The tool demo__add returned: 3"]
    assert visible(ref, "8") == ["The tool demo__square returned: [image: file.png attached]", "[image: file.png]"]


async def test_killing_the_stdio_server_mid_session_hides_its_tools_until_the_restart_one_line_each_way(caplog):
    import logging
    import signal

    caplog.set_level(logging.INFO, "hermes_gateway._core.mcp")
    ref = reference()
    gateway = make_gateway(ref, tokens_per_second=0, mcp_servers=[stdio_entry()])
    async with gateway:
        server = gateway.mcp.servers[0]
        server.ping_interval = 0.2  # notice the death at the test's pace (the default checks every 5 s)
        people = People(gateway)
        await asyncio.wait_for(people.say("1", "tool: demo__whoami {}"), 60)
        pid = int(visible(ref, "1")[0].split("pid ")[1].split()[0])
        os.kill(pid, signal.SIGKILL)
        await _eventually(lambda: "demo__whoami" not in gateway.agent.tools)
        await asyncio.wait_for(people.say("2", "tool: demo__whoami {}"), 60)
        await _eventually(lambda: "demo__whoami" in gateway.agent.tools)
        await asyncio.wait_for(people.say("3", "tool: demo__whoami {}"), 60)
    assert visible(ref, "2")[0].startswith("The tool demo__whoami returned: Error: unknown tool 'demo__whoami'")
    assert "pid " in visible(ref, "3")[0] and f"pid {pid} " not in visible(ref, "3")[0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "MCP" in r.getMessage()]
    assert len(warnings) == 2 and warnings[0].startswith("MCP server demo stopped working")
    assert warnings[1] == "MCP server demo is back: 5 tools"


async def _eventually(check, within: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_a_chats_tools_deny_in_overrides_hides_mcp_tools_there_only():
    ref = reference()
    overrides = [{"match": {"platform": "reference", "chat": "9"}, "tools": {"deny": ["demo__*"]}}]
    gateway = make_gateway(ref, tokens_per_second=0, mcp_servers=[stdio_entry()], overrides=overrides)
    async with gateway:
        people = People(gateway)
        await asyncio.wait_for(people.say("9", 'tool: demo__add {"a": 1, "b": 2}'), 60)
        await asyncio.wait_for(people.say("10", 'tool: demo__add {"a": 1, "b": 2}'), 60)
    assert visible(ref, "9")[0].startswith("The tool demo__add returned: Error: unknown tool 'demo__add'")
    assert visible(ref, "10") == ["The tool demo__add returned: 3"]
