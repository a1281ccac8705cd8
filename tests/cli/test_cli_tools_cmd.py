"""``hermes-gateway tools``: every tool with its origin (built-in, plugin, MCP server) and state."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from hermes_gateway._core.cli.main import main

SERVER = str(Path(__file__).parents[1] / "mcp" / "mcp_demo_server.py")


def test_tools_lists_built_ins_and_mcp_tools_with_their_state(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "data"))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"mcp_servers": [
        {"name": "demo", "command": sys.executable, "args": [SERVER], "tools": {"deny": ["fail"]}},
        {"name": "gone", "command": str(tmp_path / "no-such-server")},
        {"name": "later", "url": "http://127.0.0.1:9/mcp", "enabled": False}]}), encoding="utf-8")
    assert main(["tools", "--config", str(config), "--wait", "30"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "calculate built-in available" in lines
    assert "demo__add MCP server demo (stdio) available" in lines
    assert "demo__fail MCP server demo (stdio) hidden by tools.allow/deny" in lines
    assert any(line.startswith("MCP server gone (stdio): down: command not found") for line in lines)
    assert "MCP server later (http): disabled (enabled: false)" in lines


def test_a_tool_that_needs_approval_says_who_must_approve_it(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "data"))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"tools": {"approval": {"require": ["calc*"], "who": "admin"}}}),
                      encoding="utf-8")
    assert main(["tools", "--config", str(config)]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "calculate built-in available, needs approval (admin)" in lines
    assert "qr_code built-in available" in lines


def test_a_tool_a_server_lists_twice_is_listed_once_saying_which_one_the_model_gets(tmp_path: Path, capsys,
                                                                                     monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "data"))
    hostile = str(Path(__file__).parents[1] / "mcp" / "mcp_hostile_server.py")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"mcp_servers": [
        {"name": "h", "command": sys.executable, "args": [hostile], "env": {"HOSTILE_DUPLICATE": "echo"}}]}),
        encoding="utf-8")
    assert main(["tools", "--config", str(config), "--wait", "30"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert [line for line in lines if line.startswith("h__echo ")] == ["h__echo MCP server h (stdio) available"]
    assert "h__echo: offered twice by MCP server h (stdio); the model gets the first one listed" in lines
