"""``mcp_servers`` in config.yaml: one line per mistake, allow/deny globs, secrets masked in logs and `config`."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway._core.cli.config_cmd import effective
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.mcp.names import tool_name


def servers(*entries):
    return parse_config({"mcp_servers": list(entries)}, env={"TOK": "tok-9f8e7d6c5b4a"}).mcp_servers


def test_stdio_and_http_servers_parse_with_their_defaults():
    files, web = servers({"name": "files", "command": "npx", "args": ["-y", "srv"], "env": {"N": 3}},
                         {"name": "web", "url": "https://mcp.example.com/mcp", "transport": "sse", "timeout": 5})
    assert (files.transport, files.args, dict(files.env), files.timeout, files.enabled) == \
        ("stdio", ("-y", "srv"), {"N": "3"}, 60.0, True)
    assert (web.transport, web.timeout) == ("sse", 5.0)


@pytest.mark.parametrize("entry, message", [
    ({"name": "a__b", "command": "x"}, "mcp_servers[0].name: a name of 1-30 letters"),
    ({"name": "a", "command": "x", "url": "http://h/mcp"}, "mcp_servers.a: either command"),
    ({"name": "a"}, "mcp_servers.a: either command"),
    ({"name": "a", "comand": "x"}, "unknown key; expected one of"),
    ({"name": "a", "url": "ftp://h"}, "mcp_servers.a.url: an http:// or https:// URL"),
    ({"name": "a", "url": "http://h/mcp", "env": {"X": "1"}}, "env, cwd and args only with command"),
    ({"name": "a", "command": "x", "headers": {"X": "1"}}, "mcp_servers.a.headers: headers only with url"),
    ({"name": "a", "command": "x", "transport": "http"}, "mcp_servers.a.transport"),
    ({"name": "a", "command": "x", "timeout": 0}, "mcp_servers.a.timeout: a number from 0.1 to 120"),
    ({"name": "a", "command": "x", "timeout": 300}, "mcp_servers.a.timeout: a number from 0.1 to 120"),
])
def test_each_mistake_is_one_line_naming_the_key(entry, message):
    with pytest.raises(ConfigError) as caught:
        servers(entry)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_same_name_twice_is_refused():
    with pytest.raises(ConfigError, match="used once"):
        servers({"name": "a", "command": "x"}, {"name": "a", "command": "y"})


def test_allow_and_deny_are_globs_on_the_servers_tool_names():
    (server,) = servers({"name": "f", "command": "x", "tools": {"allow": ["read_*", "stat"], "deny": ["read_secret"]}})
    assert [server.offers(t) for t in ("read_file", "stat", "read_secret", "write_file")] == [True, True, False, False]


def test_names_follow_openais_rules():
    assert tool_name("files", "read_file") == "files__read_file"
    odd, long = tool_name("s", "web.search"), tool_name("server", "x" * 100)
    assert odd.startswith("s__web_search_") and odd != tool_name("s", "web_search")
    assert len(long) == 64 and long != tool_name("server", "x" * 99)
    assert all(c.isalnum() or c in "_-" for c in odd + long)


def test_env_and_header_values_never_reach_logs_or_config_output(caplog):
    config = parse_config({"mcp_servers": [
        {"name": "f", "command": "x", "env": {"API_TOKEN": "${TOK}"}},
        {"name": "w", "url": "https://user:pw-12345678@mcp.example.com/mcp",
         "headers": {"Authorization": "Bearer hdr-0123456789"}}]}, env={"TOK": "tok-9f8e7d6c5b4a"})
    shown = repr(effective(config))
    for secret in ("tok-9f8e7d6c5b4a", "hdr-0123456789", "pw-12345678"):
        assert secret not in shown
    assert "'API_TOKEN': '***'" in shown and "'Authorization': '***'" in shown
    with caplog.at_level(logging.INFO):
        logging.getLogger("some.sdk").info("sent tok-9f8e7d6c5b4a and Bearer hdr-0123456789")
    assert "tok-9f8e7d6c5b4a" not in caplog.text and "hdr-0123456789" not in caplog.text
