"""A small MCP server for the tests, written with the ``mcp`` SDK: stdio by default, ``--http`` for Streamable HTTP.

``python mcp_demo_server.py`` serves over stdin/stdout;
``python mcp_demo_server.py --http`` binds 127.0.0.1 on a free port, prints
``PORT <n>`` on stdout, and serves Streamable HTTP at ``/mcp`` (``--sse``: the
older SSE transport at ``/sse``). With ``DEMO_REQUIRED_AUTH`` set, a request
without that exact ``Authorization`` header gets 401.
"""

from __future__ import annotations

import asyncio
import io
import os
import socket
import sys

from mcp.server.mcpserver import Image, MCPServer

server = MCPServer("demo")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two whole numbers."""
    return str(a + b)


@server.tool()
def whoami() -> str:
    """The server's process id and the value of DEMO_GREETING (set through env)."""
    return f"pid {os.getpid()} says {os.environ.get('DEMO_GREETING', 'nothing')}"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer (for timeouts)."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool()
def square() -> Image:
    """A small red PNG square."""
    from PIL import Image as PILImage

    out = io.BytesIO()
    PILImage.new("RGB", (8, 8), (255, 0, 0)).save(out, format="PNG")
    return Image(data=out.getvalue(), format="png")


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


def require_authorization(app, expected: str):
    """An ASGI wrapper answering 401 unless the request's Authorization header is ``expected``."""

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization", b"").decode() != expected:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


def serve_http(sse: bool) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.sse_app() if sse else server.streamable_http_app()
    if os.environ.get("DEMO_REQUIRED_AUTH"):
        app = require_authorization(app, os.environ["DEMO_REQUIRED_AUTH"])
    config = uvicorn.Config(app, log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    if "--http" in sys.argv or "--sse" in sys.argv:
        serve_http(sse="--sse" in sys.argv)
    else:
        server.run("stdio")
