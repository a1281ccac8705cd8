"""``mcp_servers:`` of config.yaml: a list of servers, each reached over stdio or HTTP.

```yaml
mcp_servers:
  - name: files                      # tools appear as files__read_file, ...
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv/share]
    env: {TOKEN: "${FILES_TOKEN}"}    # values are secrets: masked in logs and `config`
    cwd: /srv
    timeout: 30                      # seconds per call
    tools: {allow: ["read_*"], deny: [delete_file]}
  - name: search
    url: https://mcp.example.com/mcp # Streamable HTTP; `transport: sse` for older servers
    headers: {Authorization: "Bearer ${SEARCH_KEY}"}
    enabled: false
```

Parsed with the config's own parser (handed in), so each mistake is one line
naming the file, the key and what was expected. This module does not import
:mod:`..config` at run time (the config module imports it).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

#: The top-level key of config.yaml this module parses.
MCP_KEY = "mcp_servers"
TRANSPORTS = ("stdio", "http", "sse")
KEYS = ("name", "command", "args", "env", "cwd", "url", "headers", "transport", "enabled", "timeout", "tools")
DEFAULT_TIMEOUT = 60.0
#: The agent bounds every tool call at 120 s (``AIAgent.tool_timeout``); a longer MCP timeout would never apply.
MAX_TIMEOUT = 120.0
#: A server's name is the prefix of its tools' names (``SERVER__TOOL``): short, and no ``__`` inside.
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,29}")


@dataclass(frozen=True)
class McpServerSettings:
    """One entry of ``mcp_servers``: how to reach the server and which of its tools to offer."""

    name: str
    transport: str = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    def offers(self, tool: str) -> bool:
        """Whether ``tool`` (the server's own name for it) passes ``tools: {allow, deny}`` (globs)."""
        if any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.deny):
            return False
        return self.allow is None or any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.allow)

    def secrets(self) -> tuple[str, ...]:
        """The values to keep out of logs and errors: every ``env`` and ``headers`` value, URL credentials."""
        from ..masking import url_secrets

        found = [*self.env.values(), *self.headers.values(), *url_secrets(self.url)]
        for value in self.headers.values():  # "Bearer sk-…": the token alone is a secret too
            found += value.split()[1:]
        return tuple(found)

    def __repr__(self) -> str:  # never the env or header values
        where = self.url if self.transport != "stdio" else self.command
        return f"McpServerSettings(name={self.name!r}, transport={self.transport!r}, at={where!r})"


def parse_mcp_servers(p: Any, value: Any) -> tuple[McpServerSettings, ...]:
    """``mcp_servers`` validated with the config parser ``p`` (one line per mistake)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise p.fail(MCP_KEY, "a list of servers, each a mapping with name and command (stdio) or url (HTTP)")
    servers: list[McpServerSettings] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        key = f"{MCP_KEY}[{i}]"
        sec = p.section(item, key, KEYS)
        if not isinstance(item, dict):
            raise p.fail(key, "a mapping with name and command (stdio) or url (HTTP)")
        name = sec.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise p.fail(f"{key}.name", "a name of 1-30 letters, digits, '-' or '_' (no '__': it separates server "
                                        f"and tool in SERVER__TOOL), got {name!r}")
        if name in seen:
            raise p.fail(f"{key}.name", f"a name used once, got {name!r} a second time")
        seen.add(name)
        key = f"{MCP_KEY}.{name}"
        servers.append(_server(p, sec, key, name))
    return tuple(servers)


def _server(p: Any, sec: dict, key: str, name: str) -> McpServerSettings:
    command = p.get(sec, key, "command", "str", None)
    url = p.get(sec, key, "url", "url", None)
    if (command is None) == (url is None):
        raise p.fail(key, "either command (a stdio server) or url (a Streamable HTTP or SSE server), not both")
    default = "stdio" if command is not None else "http"
    transport = p.get(sec, key, "transport", "str", default, choices=TRANSPORTS)
    if (transport == "stdio") != (command is not None):
        raise p.fail(f"{key}.transport", f"stdio with command, http or sse with url; got {transport} with "
                                         f"{'command' if command is not None else 'url'}")
    args = p.get(sec, key, "args", "strlist", ()) if sec.get("args") != [] else ()
    env = _string_map(p, sec.get("env"), f"{key}.env")
    headers = _string_map(p, sec.get("headers"), f"{key}.headers")
    if command is None and (env or "cwd" in sec or args):
        raise p.fail(key, "env, cwd and args only with command (a stdio server); an HTTP server takes headers")
    if url is None and headers:
        raise p.fail(f"{key}.headers", "headers only with url (an HTTP server); a stdio server takes env")
    tools = p.section(sec.get("tools"), f"{key}.tools", ("allow", "deny"))
    return McpServerSettings(
        name=name, transport=transport, command=command, args=tuple(args), env=env,
        cwd=p.get(sec, key, "cwd", "str", None), url=url, headers=headers,
        enabled=p.get(sec, key, "enabled", "bool", True),
        timeout=p.get(sec, key, "timeout", "number", DEFAULT_TIMEOUT, minimum=0.1, maximum=MAX_TIMEOUT),
        allow=p.get(tools, f"{key}.tools", "allow", "strlist", None),
        deny=p.get(tools, f"{key}.tools", "deny", "strlist", ()))


def _string_map(p: Any, value: Any, key: str) -> dict[str, str]:
    """``env`` / ``headers``: names to strings (numbers and booleans written plainly become strings)."""
    sec = p.section(value, key, None)
    out: dict[str, str] = {}
    for name, item in sec.items():
        if not isinstance(name, str) or not name:
            raise p.fail(key, f"names that are non-empty strings, got {name!r}")
        if isinstance(item, bool):
            item = "true" if item else "false"
        elif isinstance(item, (int, float)):
            item = str(item)
        if not isinstance(item, str):
            raise p.fail(f"{key}.{name}", f"a string, got {type(item).__name__}")
        out[name] = item
    return out
