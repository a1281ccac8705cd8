"""Small pieces both chat modes share: building the agent, one-line errors, the model's name."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlparse

from ..config import Config

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 300


def make_agent(config: Config, mcp: Any = None) -> Any:
    """The real agent for this config (imported late so ``--help`` stays fast).

    ``mcp``: the running :class:`~hermes_gateway._core.mcp.servers.McpServers`, whose tools the agent
    offers while their servers are up (besides the tools plugins register).
    """
    from ..agent import AIAgent

    if mcp is None:
        return AIAgent.from_config(config)
    from ..plugins import installed_plugins
    from ..toolbox import ToolBox
    from ..tools import collect_tools

    return AIAgent.from_config(config, tools=ToolBox(collect_tools(installed_plugins(), config), [mcp]))


def chat_mcp_servers(config: Config) -> Any:
    """The config's MCP servers for a terminal chat (None without any); their stderr stays off the screen."""
    if not config.mcp_servers:
        return None
    import logging
    import os

    from ..mcp.servers import McpServers

    verbose = logging.getLogger().isEnabledFor(logging.INFO)
    return McpServers(config.mcp_servers, errlog=None if verbose else open(os.devnull, "w"))


async def close_agent(agent: Any) -> None:
    """Close the agent's HTTP connections; a failure to close is not worth a word to the user."""
    aclose = getattr(agent, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:
        log.debug("closing the agent failed", exc_info=True)


def one_line(exc: BaseException) -> str:
    """An exception as a single readable line: its first line, clipped, with its kind."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    return clip(f"{kind}: {text}" if text else kind)


def clip(message: str) -> str:
    """A message squeezed onto one line of reasonable length."""
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[:MAX_ERROR_CHARS - 1] + "…"
    return line


def describe_model(config: Config) -> str:
    """``demo model — ...`` or ``gpt-4o at api.example.com``; never the key, never the path."""
    if config.model.is_demo:
        return "demo model — set model.base_url in config.yaml for a real one"
    endpoint = config.model.endpoint
    host = urlparse(endpoint.base_url or "").hostname or endpoint.base_url
    return f"{endpoint.name} at {host}"


def box_label(config: Config) -> str:
    return "demo" if config.model.is_demo else config.model.endpoint.name
