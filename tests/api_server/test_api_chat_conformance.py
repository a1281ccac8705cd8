"""Chat Completions conformance: the real openai SDK and the raw SSE bytes against the running gateway.

The agent is the real AIAgent answering from the built-in demo model
(``echo: TEXT`` answers exactly TEXT, word by word).
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from api_helpers import (MODEL, SSEEvent, api, gateway_config, parse_sse, post_raw, running_gateway)

TEXT = "The quick brown fox jumps over the lazy dog, twice."


@pytest.fixture
def client(gateway):
    return openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)


def echo(text: str = TEXT) -> list[dict]:
    return [{"role": "user", "content": f"echo: {text}"}]


async def test_sdk_create_stream_yields_role_then_one_chunk_per_word_then_finish_and_usage(client):
    stream = await client.chat.completions.create(model=MODEL, messages=echo(), stream=True,
                                                  stream_options={"include_usage": True})
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.choices[0].delta.role is None for c in chunks[1:] if c.choices)
    contents = [c.choices[0].delta.content for c in chunks[1:] if c.choices and c.choices[0].delta.content]
    assert "".join(contents) == TEXT
    assert len(contents) == len(TEXT.split(" "))  # word-sized deltas from the demo model, none merged
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert len({c.id for c in chunks}) == 1


async def test_sdk_stream_helper_final_completion(client):
    async with client.chat.completions.stream(model=MODEL, messages=echo()) as stream:
        seen = [event async for event in stream]
        final = await stream.get_final_completion()
    assert final.choices[0].message.content == TEXT
    assert final.choices[0].message.role == "assistant"
    assert final.choices[0].finish_reason == "stop"
    assert [e for e in seen if e.type == "content.done"][0].content == TEXT


async def test_sdk_non_streaming(client):
    completion = await client.chat.completions.create(model=MODEL, messages=echo())
    assert completion.choices[0].message.content == TEXT
    assert completion.usage.completion_tokens > 0


async def test_raw_wire_framing_is_exact(gateway):
    status, headers, raw = await post_raw(f"{gateway.url}/v1/chat/completions", {
        "model": MODEL, "messages": echo(), "stream": True, "stream_options": {"include_usage": True}})
    assert status == 200
    assert headers["Content-Type"].startswith("text/event-stream")
    assert headers["Cache-Control"] == "no-cache" and headers["X-Accel-Buffering"] == "no"
    events = parse_sse(raw)
    assert all(isinstance(e, SSEEvent) and e.event is None for e in events)  # data: lines only, no pings needed
    assert [e.data for e in events].count("[DONE]") == 1 and events[-1].data == "[DONE]"
    chunks = [ChatCompletionChunk.model_validate(e.json()) for e in events[:-1]]  # strict: raises on a bad field
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[0].choices[0].delta.content == ""
    body = chunks[1:-2]
    assert body and all(c.choices[0].delta.content and c.choices[0].finish_reason is None for c in body)
    assert "".join(c.choices[0].delta.content for c in body) == TEXT
    assert chunks[-2].choices[0].finish_reason == "stop" and chunks[-2].choices[0].delta.content is None
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.role) == 1


async def test_no_usage_chunk_unless_asked(gateway):
    _, _, raw = await post_raw(f"{gateway.url}/v1/chat/completions",
                               {"model": MODEL, "messages": echo(), "stream": True})
    events = parse_sse(raw)
    assert events[-1].data == "[DONE]"
    last = ChatCompletionChunk.model_validate(events[-2].json())
    assert last.choices[0].finish_reason == "stop" and last.usage is None


async def test_raw_non_streaming_body_validates(gateway):
    status, headers, raw = await post_raw(f"{gateway.url}/v1/chat/completions",
                                          {"model": MODEL, "messages": echo(), "stream": False})
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    completion = ChatCompletion.model_validate(json.loads(raw))
    assert completion.choices[0].message.content == TEXT


async def test_reasoning_reaches_no_client_by_default(client):
    """The README's promise: a person never sees the model's reasoning, not even as reasoning_content."""
    stream = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "think: 42"}],
                                                  stream=True)
    chunks = [c async for c in stream]
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "42"
    assert all(getattr(c.choices[0].delta, "reasoning_content", None) is None for c in chunks if c.choices)
    whole = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "think: 42"}])
    assert whole.choices[0].message.content == "42"
    assert getattr(whole.choices[0].message, "reasoning_content", None) is None


async def test_expose_reasoning_sends_thinking_as_reasoning_content_never_into_content():
    async with running_gateway(gateway_config(api={"expose_reasoning": True})) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
        messages = [{"role": "user", "content": "think: 42"}]
        stream = await client.chat.completions.create(model=MODEL, messages=messages, stream=True)
        chunks = [c async for c in stream]
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices)
        assert content == "42"
        assert "demo model" in reasoning and "<think>" not in reasoning + content
        whole = await client.chat.completions.create(model=MODEL, messages=messages)
        assert whole.choices[0].message.content == "42"
        assert "demo model" in whole.choices[0].message.reasoning_content
        await client.close()


async def test_multi_paragraph_reply_streams_identically_to_the_non_streaming_reply(client):
    messages = [{"role": "user", "content": "hello there"}]
    stream = await client.chat.completions.create(model=MODEL, messages=messages, stream=True)
    streamed = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    whole = await client.chat.completions.create(model=MODEL, messages=messages)
    assert streamed == whole.choices[0].message.content
    assert "\n\n" in streamed and "demo model" in streamed


@pytest.mark.parametrize("config_streaming, body_stream, expect_sse", [
    (True, None, False), (False, None, False), (True, False, False), (False, True, True), (True, True, True)])
async def test_stream_is_the_clients_choice_absent_means_plain_json(config_streaming, body_stream, expect_sse,
                                                                    monkeypatch):
    """OpenAI's default: no ``stream`` = not streamed, whatever the streaming config says for chats."""
    monkeypatch.setenv("HERMES_STREAMING_ENABLED", "true" if config_streaming else "false")
    cfg = gateway_config({"streaming": {"enabled": config_streaming}})
    async with running_gateway(cfg) as gw:
        body = {"model": MODEL, "messages": echo("ok")}
        if body_stream is not None:
            body["stream"] = body_stream
        for path in ("/v1/chat/completions", "/v1/responses"):
            if path == "/v1/responses":
                body = {"model": MODEL, "input": "echo: ok", **({} if body_stream is None else {"stream": body_stream})}
            status, headers, raw = await post_raw(f"{gw.url}{path}", body)
            assert status == 200
            assert headers["Content-Type"].startswith("text/event-stream") is expect_sse, path
            if not expect_sse:
                reply = json.loads(raw)
                text = reply["choices"][0]["message"]["content"] if "choices" in reply else reply["output"][0][
                    "content"][0]["text"]
                assert text == "ok"


async def test_per_platform_streaming_key_for_api_server_does_not_stream_a_request_without_stream():
    cfg = gateway_config({"streaming": {"enabled": False, "api_server": {"enabled": True}}})
    async with running_gateway(cfg) as gw:
        _, headers, _ = await post_raw(f"{gw.url}/v1/chat/completions", {"model": MODEL, "messages": echo("ok")})
        assert headers["Content-Type"].startswith("application/json")


async def test_history_from_the_client_reaches_the_model(gateway, client):
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": "noted"}, {"role": "user", "content": "echo: second"}]
    completion = await client.chat.completions.create(model=MODEL, messages=messages)
    assert completion.choices[0].message.content == "second"
    assert completion.usage.prompt_tokens > 6  # the whole conversation was sent upstream


async def test_models_endpoint(client):
    models = [m async for m in client.models.list()]
    assert [m.id for m in models] == [MODEL]
    assert (await client.models.retrieve(MODEL)).id == MODEL


async def test_concurrent_streams_are_independent(client, gateway):
    async def one(i: int) -> str:
        stream = await client.chat.completions.create(model=MODEL, messages=echo(f"stream {i} says hi"),
                                                      stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    results = await asyncio.gather(*(one(i) for i in range(20)))
    assert results == [f"stream {i} says hi" for i in range(20)]
    assert api(gateway).metrics.active_streams == 0


async def test_each_delta_is_on_the_wire_before_the_next_one_exists(upstream):
    """No buffering: the client reads a delta while the upstream has not produced the next one yet."""
    release = asyncio.Event()

    async def script(body, s):
        await s.role()
        await s.text("Hello")
        await release.wait()
        await s.text(" world")
        await s.finish()
    upstream.stream_script = script
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{gw.url}/v1/chat/completions", json={
                    "model": MODEL, "messages": echo("x"), "stream": True}) as r:
                seen = b""
                while b'"content":"Hello"' not in seen:
                    seen += await asyncio.wait_for(r.content.readany(), 10)
                assert b" world" not in seen
                release.set()
                rest = await r.read()
        events = parse_sse(seen + rest)
        text = "".join(ChatCompletionChunk.model_validate(e.json()).choices[0].delta.content or ""
                       for e in events[:-1] if e.json()["choices"])
        assert text == "Hello world"


async def test_unicode_survives_byte_for_byte(client):
    text = "héllo 👋 世界 «quotes» \"escaped\" \\ back\\slash"
    async with client.chat.completions.stream(model=MODEL, messages=echo(text)) as stream:
        final = await stream.get_final_completion()
    assert final.choices[0].message.content == text
