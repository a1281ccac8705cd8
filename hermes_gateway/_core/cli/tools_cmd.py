"""``hermes-gateway tools``: every tool the model may be offered, where it comes from, and its state.

Built-in tools and plugin tools are listed from the loaded plugins. MCP
servers are started for a moment (as the gateway would, each bounded by
``--wait``) to list their tools; a server that does not come up is one line
with the reason, and its tools cannot be listed. A tool the server lists but
``tools: {allow, deny}`` keeps from the model is shown as ``hidden``. A tool
under ``tools.approval.require`` says who must approve it (issue 25).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from .loading import load_checked

DEFAULT_WAIT = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config.yaml to use (default: $HERMES_CONFIG, "
                        "./config.yaml, ~/.hermes/config.yaml)")
    parser.add_argument("--wait", type=float, default=DEFAULT_WAIT, metavar="SECONDS",
                        help=f"how long to wait for each MCP server to start (default {DEFAULT_WAIT:g})")


def run(args: argparse.Namespace) -> int:
    config, plugins = load_checked(args.config)
    print("\n".join(asyncio.run(tool_lines(config, plugins, wait=args.wait))))
    return 0


async def tool_lines(config: Any, plugins: Any, *, wait: float = DEFAULT_WAIT) -> list[str]:
    """The listing, one tool per line: ``NAME  ORIGIN  STATE``, MCP servers after the plugins' tools."""
    rows: list[tuple[str, str, str]] = []
    for tool, impl in plugins.collect("register_tools", _tool_type(), "tool"):
        origin = plugins.origins.get(impl.plugin_name, "")
        where = "built-in" if origin == "built-in" else f"plugin {impl.plugin_name}"
        rows.append((tool.name, where, "available"))
    notes: list[str] = []
    if config.mcp_servers:
        from ..mcp.servers import McpServers

        with open(os.devnull, "w") as quiet:
            servers = McpServers(config.mcp_servers, errlog=quiet, startup_wait=wait, connect_timeout=wait)
            try:
                await servers.start()
                for server in servers.servers:
                    where = f"MCP server {server.name} ({server.settings.transport})"
                    if server.state != "up":
                        notes.append(f"{where}: {server.state}"
                                     f"{': ' + server.reason if server.reason else ''} — its tools are unavailable")
                        continue
                    for listed in server.listed:
                        state = "available" if listed.offered else "hidden by tools.allow/deny"
                        rows.append((listed.name, where, state))
            finally:
                await servers.stop()
        for settings in servers.disabled:
            notes.append(f"MCP server {settings.name} ({settings.transport}): disabled (enabled: false)")
    rows = [(name, origin, _with_approval(config, name, state)) for name, origin, state in _once(rows, notes)]
    width = max((len(name) for name, _, _ in rows), default=4)
    origin_width = max((len(origin) for _, origin, _ in rows), default=6)
    lines = [f"{'TOOL':<{width}}  {'ORIGIN':<{origin_width}}  STATE"]
    lines += [f"{name:<{width}}  {origin:<{origin_width}}  {state}" for name, origin, state in rows]
    if notes:
        lines += ["", *notes]
    return lines


def _once(rows: list[tuple[str, str, str]], notes: list[str]) -> list[tuple[str, str, str]]:
    """Each name once, as the model sees it: of the tools offered under one name the first wins (the agent's
    ToolBox keeps the first: plugins' tools, then MCP servers in config order, each in its listed order)."""
    kept: dict[str, tuple[str, str, str]] = {}
    for row in rows:
        name, origin, state = row
        first = kept.get(name)
        if first is None or (first[2] != "available" and state == "available"):  # a hidden one is never offered
            kept[name] = row
            continue
        if state == "available":
            if origin == first[1]:
                notes.append(f"{name}: offered twice by {origin}; the model gets the first one listed")
            else:
                notes.append(f"{name}: offered by {first[1]} and by {origin}; the model gets {first[1]}'s")
    return list(kept.values())


def _with_approval(config: Any, name: str, state: str) -> str:
    """``available, needs approval (requester)`` for a tool ``tools.approval.require`` names."""
    approval = config.tools.approval
    if state != "available" or not approval.needs(name):
        return state
    return f"{state}, needs approval ({approval.who})"


def _tool_type() -> type:
    from ..tools import Tool

    return Tool
