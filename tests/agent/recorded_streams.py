"""Streamed bodies recorded from the demo model over HTTP, replayed byte for byte by the scripted upstream.

``recorded_streams.json`` maps a name to the exact SSE body ``hermes-gateway
demo-llm`` sent (Chat Completions and Responses, text and tool calls).
Re-record with ``python tests/agent/recorded_streams.py > tests/agent/recorded_streams.json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

RECORDING = Path(__file__).with_name("recorded_streams.json")
#: The demo's tool call: a function call to ``calculate`` that the model then reports.
CALCULATE = 'tool: calculate {"expression": "6 * 7"}'
ECHO = "echo: recorded streams say hello"
_CALL = {"id": "call_1", "type": "function", "function": {"name": "calculate", "arguments": '{"expression": "6 * 7"}'}}
_CHAT_TOOL = {"type": "function", "function": {"name": "calculate", "parameters": {"type": "object"}}}


def load() -> dict[str, bytes]:
    return {name: body.encode() for name, body in json.loads(RECORDING.read_text(encoding="utf-8")).items()}


def _requests() -> dict[str, tuple[str, dict[str, Any]]]:
    chat: dict[str, Any] = {"model": "demo", "stream": True, "stream_options": {"include_usage": True}}
    responses: dict[str, Any] = {"model": "demo", "stream": True}
    return {
        "chat_text": ("/chat/completions", {**chat, "messages": [{"role": "user", "content": ECHO}]}),
        "chat_tool_call": ("/chat/completions", {**chat, "messages": [{"role": "user", "content": CALCULATE}],
                                                 "tools": [_CHAT_TOOL]}),
        "chat_after_tool": ("/chat/completions", {**chat, "messages": [
            {"role": "user", "content": CALCULATE}, {"role": "assistant", "content": None, "tool_calls": [_CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "42"}]}),
        "responses_text": ("/responses", {**responses, "input": [{"role": "user", "content": ECHO}]}),
        "responses_tool_call": ("/responses", {**responses, "input": [{"role": "user", "content": CALCULATE}],
                                               "tools": [{"type": "function", "name": "calculate",
                                                          "parameters": {"type": "object"}}]}),
        "responses_after_tool": ("/responses", {**responses, "input": [
            {"role": "user", "content": CALCULATE},
            {"type": "function_call", "call_id": "call_1", "name": "calculate", "arguments": '{"expression": "6 * 7"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "42"}]}),
    }


async def record() -> dict[str, str]:
    import aiohttp

    from hermes_gateway._core.demo.server import serve

    bodies: dict[str, str] = {}
    async with serve(tokens_per_second=0) as url, aiohttp.ClientSession() as session:
        for name, (path, body) in _requests().items():
            async with session.post(url + path, json=body) as response:
                bodies[name] = (await response.read()).decode()
    return bodies


if __name__ == "__main__":
    json.dump(asyncio.run(record()), sys.stdout, indent=1, ensure_ascii=False)
    print()
