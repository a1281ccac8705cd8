"""A misbehaving stdio MCP server for the tests: plain JSON-RPC lines, no SDK, so it can do what the SDK would not.

Environment: ``HOSTILE_TOOLS`` tools ``t0 ...`` listed besides the tools below (default 1); each ``tools/list``
appends a line to the file ``HOSTILE_LISTS`` (when set); ``HOSTILE_STUBBORN=1``: SIGTERM and the end of stdin
are ignored (only SIGKILL ends it); ``HOSTILE_DUPLICATE``: that tool is listed a second time. Tools: ``flood_stderr {lines, size}`` writes that many lines of ``size``
bytes to stderr; ``junk_stdout {lines}`` writes lines that are not JSON-RPC to stdout; ``change`` adds the
tool ``added`` and sends ``notifications/tools/list_changed``; ``echo {text}`` answers the text.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

TOOLS = [f"t{i}" for i in range(int(os.environ.get("HOSTILE_TOOLS", "1")))] + ["flood_stderr", "junk_stdout",
                                                                               "change", "echo"]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def answer(msg: dict) -> None:
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                  "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        if os.environ.get("HOSTILE_LISTS"):
            with open(os.environ["HOSTILE_LISTS"], "a") as f:
                f.write("list\n")
        twice = [os.environ["HOSTILE_DUPLICATE"]] if os.environ.get("HOSTILE_DUPLICATE") else []
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS + twice]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        name = params.get("name")
        if name == "flood_stderr":
            line = "e" * int(args.get("size", 80)) + "\n"
            for _ in range(int(args.get("lines", 1))):
                sys.stderr.write(line)
            sys.stderr.flush()
        elif name == "junk_stdout":
            for i in range(int(args.get("lines", 1))):
                sys.stdout.write(f"junk line {i}\n")
            sys.stdout.flush()
        elif name == "change":
            TOOLS.append("added")
            send({"method": "notifications/tools/list_changed"})
        text = args.get("text", "done") if name == "echo" else "done"
        result = {"content": [{"type": "text", "text": str(text)}], "isError": False}
    else:
        send({"id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
        return
    send({"id": msg["id"], "result": result})


def main() -> None:
    stubborn = os.environ.get("HOSTILE_STUBBORN") == "1"
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" in msg and "method" in msg:
            answer(msg)
    while stubborn:
        time.sleep(1)


if __name__ == "__main__":
    main()
