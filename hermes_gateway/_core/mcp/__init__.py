"""Tools from MCP servers (``mcp_servers:`` in config.yaml), built on the official ``mcp`` SDK.

- :mod:`..settings.mcp`: the ``mcp_servers`` section, parsed like the rest of the config.
- :mod:`.names`: ``SERVER__TOOL`` names within OpenAI's rules, and ``tools: {allow, deny}``.
- :mod:`.results`: a tool result's text for the model, its images and files as media.
- :mod:`.server`: one server's life in its own task: connect, list tools, watch, restart with backoff.
- :mod:`.servers`: every configured server together, as one live source of tools for the agent.

The tools are ordinary :class:`~hermes_gateway._core.tools.Tool` values, so
whatever wraps tool execution (timeouts, approvals) applies to them as well.
"""
