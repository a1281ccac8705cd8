"""``demo-llm`` on the wire: the bytes an OpenAI client receives, checked against the protocol rules."""

from __future__ import annotations

import json
from typing import AsyncIterator

import aiohttp
import pytest

from hermes_gateway._core.demo.server import serve
from hermes_gateway._core.demo.endpoint import DemoEndpoint


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(tokens_per_second=0) as url:
        yield url


async def post(url: str, body: dict | bytes) -> tuple[int, dict, bytes]:
    async with aiohttp.ClientSession() as session:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with session.post(url, data=data, headers={"Content-Type": "application/json"}) as resp:
            return resp.status, dict(resp.headers), await resp.read()


def frames(raw: bytes) -> list[tuple[str | None, str]]:
    out = []
    for block in raw.decode().split("\n\n"):
        if not block:
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        out.append((event, "\n".join(data)))
    return out


async def test_chat_stream_follows_the_rules_clients_rely_on(base: str) -> None:
    status, headers, raw = await post(f"{base}/chat/completions", {
        "model": "m", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": 'tool: calculate {"expression": "2 + 2 + 2 + 2"}'}]})
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    assert headers["Cache-Control"] == "no-cache" and headers["X-Accel-Buffering"] == "no"
    items = frames(raw)
    assert items[-1] == (None, "[DONE]") and all(event is None for event, _ in items)
    chunks = [json.loads(data) for _, data in items[:-1]]
    assert sum("role" in c["choices"][0]["delta"] for c in chunks if c["choices"]) == 1
    calls = [tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    assert [("id" in tc, "name" in tc.get("function", {})) for tc in calls] == \
           [(True, True)] + [(False, False)] * (len(calls) - 1)
    assert "".join(tc["function"]["arguments"] for tc in calls) == '{"expression": "2 + 2 + 2 + 2"}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


async def test_chat_non_stream_and_no_usage_without_asking(base: str) -> None:
    status, _, raw = await post(f"{base}/chat/completions", {"model": "m", "messages": [
        {"role": "user", "content": "echo: plain"}]})
    body = json.loads(raw)
    assert status == 200 and body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == "plain" and body["choices"][0]["finish_reason"] == "stop"
    _, _, raw = await post(f"{base}/chat/completions", {"model": "m", "stream": True, "messages": [
        {"role": "user", "content": "echo: x"}]})
    assert all("usage" not in json.loads(d) for _, d in frames(raw)[:-1])


async def test_responses_stream_has_typed_events_and_dense_sequence_numbers(base: str) -> None:
    _, headers, raw = await post(f"{base}/responses", {"model": "m", "stream": True, "input": "echo: a b"})
    items = frames(raw)
    events = [json.loads(d) for _, d in items]
    assert [e for e, _ in items] == [e["type"] for e in events]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events] == [
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.completed"]
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "a b"


async def test_models_and_errors(base: str) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/models") as resp:
            assert (await resp.json())["data"][0]["id"] == "demo"
        async with session.get(f"{base}/nothing") as resp:
            assert resp.status == 404 and "error" in await resp.json()
    status, _, raw = await post(f"{base}/chat/completions", b"{not json")
    assert status == 400 and json.loads(raw)["error"]["message"] == "the request body is not valid JSON"
    status, _, raw = await post(f"{base}/chat/completions", {"messages": "nope"})
    assert status == 400 and json.loads(raw)["error"]["param"] == "messages"


def test_pace_is_derived_from_tokens_per_second() -> None:
    assert DemoEndpoint(30).delay == pytest.approx(1 / 30) and DemoEndpoint(0).delay == 0
    with pytest.raises(ValueError):
        DemoEndpoint(-1)
