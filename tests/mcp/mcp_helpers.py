"""Helpers for the MCP tests: the demo MCP server (tests/mcp/mcp_demo_server.py) as stdio config or HTTP process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

SERVER = str(Path(__file__).with_name("mcp_demo_server.py"))


def stdio_entry(name: str = "demo", **extra: Any) -> dict[str, Any]:
    """An ``mcp_servers`` entry that runs the demo server as a subprocess over stdio."""
    return {"name": name, "command": sys.executable, "args": [SERVER], **extra}


@contextlib.contextmanager
def http_server(*, sse: bool = False, authorization: str | None = None) -> Iterator[str]:
    """The demo server over Streamable HTTP (or SSE) on 127.0.0.1 (a free port); yields its URL.

    ``authorization``: the only Authorization header it accepts (else 401).
    """
    env = {**os.environ, "DEMO_REQUIRED_AUTH": authorization or ""}
    process = subprocess.Popen([sys.executable, SERVER, "--sse" if sse else "--http"], stdout=subprocess.PIPE,
                               text=True, env=env)
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("PORT "), f"the demo MCP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/{'sse' if sse else 'mcp'}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
