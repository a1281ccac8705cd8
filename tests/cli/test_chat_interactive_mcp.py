"""The interactive chat (a real pty) starts the config's MCP servers and the model calls their tools by name."""

from __future__ import annotations

import sys
from pathlib import Path

from cli_helpers import write_config

def at_prompt(screen: str) -> bool:
    lines = [line for line in screen.splitlines() if line.strip()]
    return bool(lines) and lines[-1].strip() == "›"


SERVER = str(Path(__file__).parents[1] / "mcp" / "mcp_demo_server.py")


def test_the_interactive_chat_calls_a_stdio_mcp_servers_tool(terminal, tmp_path):
    config = write_config(tmp_path, tokens_per_second=0, streaming=False)
    with config.open("a", encoding="utf-8") as f:
        f.write(f"mcp_servers:\n  - name: demo\n    command: {sys.executable}\n    args: [{SERVER}]\n")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)
    term.enter('tool: demo__add {"a": 20, "b": 22}')
    screen = term.wait_for(lambda s: ("returned: 42" in s or "unknown tool" in s) and at_prompt(s))
    assert "The tool demo__add returned: 42" in screen
    term.ctrl("d")
    assert term.wait_exit() == 0
