"""The gateway's built-in tools, for tests that compare what a platform received with what a tool made."""

from __future__ import annotations

from .._core.tools import Tool


def builtin_tool(name: str) -> Tool:
    """The built-in tool ``name`` (``current_time``, ``calculate``, ``qr_code``); KeyError names the known ones."""
    from .._core.builtin import tools

    found: list[Tool] = []
    tools.register_tools(found.append)
    by_name = {tool.name: tool for tool in found}
    if name not in by_name:
        raise KeyError(f"no built-in tool {name!r} (known: {', '.join(sorted(by_name))})")
    return by_name[name]
