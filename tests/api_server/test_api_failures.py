"""Failures after the stream started, stream resets, keep-alives and opt-in tool progress.

The agent is real; the upstream is scripted so it can fail exactly where a
test needs it to.
"""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from api_helpers import MODEL, api, gateway_config, parse_sse, post_raw, running_gateway

EVENTS = TypeAdapter(ResponseStreamEvent)
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
RESP = {"model": MODEL, "input": "hi", "stream": True}


def cut_after(*pieces: str):
    async def script(body, s):
        await s.role()
        for piece in pieces:
            await s.text(piece)
        await asyncio.sleep(0.05)  # let the pieces reach the agent before the connection drops
        s.cut()
    return script


def chat_pieces(events):
    """(contents, trailing non-chunk events) of a raw chat stream."""
    contents, rest = [], []
    for e in events[:-1]:
        body = e.json()
        if "error" in body:
            rest.append(body)
        else:
            chunk = ChatCompletionChunk.model_validate(body)
            if chunk.choices and chunk.choices[0].delta.content:
                contents.append(chunk.choices[0].delta.content)
    return contents, rest


async def test_mid_stream_failure_chat_error_event_then_done(upstream):
    upstream.stream_script = cut_after("Hello", " wor")  # and the non-streaming retry is refused (400)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", CHAT)
        assert status == 200
        events = parse_sse(raw)
        assert events[-1].data == "[DONE]" and [e.data for e in events].count("[DONE]") == 1
        contents, errors = chat_pieces(events)
        assert contents == ["Hello", " wor"]
        assert events[-2].json() == errors[0]
        error = errors[0]["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["code"] == "upstream_error" and error["type"] == "server_error"
        assert "sk-upstream-secret" not in raw.decode() and upstream.url not in raw.decode()
        assert not any('"finish_reason":"stop"' in e.data for e in events)

        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        stream = await client.chat.completions.create(**CHAT)
        with pytest.raises(openai.APIError):
            async for _ in stream:
                pass
        assert api(gw).metrics.active_streams == 0
        assert api(gw).metrics.errors["upstream_error"] == 2


async def test_mid_stream_failure_responses_ends_with_response_failed(upstream):
    upstream.stream_script = cut_after("Hello", " wor")
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        _, _, raw = await post_raw(f"{gw.url}/v1/responses", RESP)
        parsed = [EVENTS.validate_python(e.json()) for e in parse_sse(raw)]
        assert [p.sequence_number for p in parsed] == list(range(len(parsed)))
        assert parsed[-1].type == "response.failed"
        failed = parsed[-1].response
        assert failed.status == "failed" and failed.error.code == "server_error" and failed.error.message
        assert failed.output[0].status == "incomplete" and failed.output[0].content[0].text == "Hello wor"
        assert "response.completed" not in [p.type for p in parsed]

        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        async with client.responses.stream(model=MODEL, input="hi") as stream:
            types = [e.type async for e in stream]
            assert types[-1] == "response.failed"
            with pytest.raises(RuntimeError):
                await stream.get_final_response()


async def test_reset_whose_retry_repeats_the_sent_text_continues_seamlessly(upstream):
    """The stream dies after "Hello wor"; the non-streaming retry says "Hello world!": the client gets exactly that."""
    upstream.stream_script = cut_after("Hello", " wor")
    upstream.reply = lambda body: "Hello world!"
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        _, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", CHAT)
        contents, errors = chat_pieces(parse_sse(raw))
        assert errors == [] and "".join(contents) == "Hello world!"
        assert contents[:2] == ["Hello", " wor"]

        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        async with client.responses.stream(model=MODEL, input="hi") as stream:
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            final = await stream.get_final_response()
        assert "".join(deltas) == final.output_text == "Hello world!"


async def test_reset_whose_retry_differs_ends_the_stream_with_an_honest_error(upstream):
    upstream.stream_script = cut_after("Paris", " is")
    upstream.reply = lambda body: "Lyon is lovely."
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        _, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", CHAT)
        events = parse_sse(raw)
        contents, errors = chat_pieces(events)
        assert "".join(contents) == "Paris is"  # nothing of the retry is glued onto the old text
        assert errors[0]["error"]["code"] == "stream_reset" and events[-1].data == "[DONE]"

        _, _, raw = await post_raw(f"{gw.url}/v1/responses", RESP)
        last = EVENTS.validate_python(parse_sse(raw)[-1].json())
        assert last.type == "response.failed" and "retry" in last.response.error.message
        assert api(gw).metrics.errors["stream_reset"] == 2


async def test_keepalive_pings_while_the_first_token_is_slow(upstream):
    async def slow(body, s):
        await s.role()
        await asyncio.sleep(0.25)
        await s.text("late")
        await s.finish()
    upstream.stream_script = slow
    cfg = gateway_config(model=upstream.model_config(), api={"keepalive_interval": 0.03})
    async with running_gateway(cfg) as gw:
        for path, body in (("/v1/chat/completions", CHAT), ("/v1/responses", RESP)):
            _, _, raw = await post_raw(f"{gw.url}{path}", body)
            items = parse_sse(raw)
            first_text = next(i for i, e in enumerate(items) if not isinstance(e, str) and "late" in e.data)
            pings = [e for e in items[:first_text] if isinstance(e, str)]
            assert len(pings) >= 2 and set(pings) == {": ping"}
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        async with client.chat.completions.stream(model=MODEL, messages=CHAT["messages"]) as stream:
            assert (await stream.get_final_completion()).choices[0].message.content == "late"
        async with client.responses.stream(model=MODEL, input="hi") as stream:
            assert (await stream.get_final_response()).output_text == "late"


@pytest.mark.parametrize("path, body", [("/v1/chat/completions", CHAT), ("/v1/responses", RESP)])
async def test_tool_progress_events_only_when_opted_in(path, body):
    body = {**body, "messages": [{"role": "user", "content": 'tool: calculate {"expression": "6 * 7"}'}],
            "input": 'tool: calculate {"expression": "6 * 7"}'}
    if path == "/v1/chat/completions":
        body.pop("input")
    else:
        body.pop("messages")
    for opted_in in (False, True):
        async with running_gateway(gateway_config(api={"tool_progress_events": opted_in})) as gw:
            _, _, raw = await post_raw(f"{gw.url}{path}", body)
        items = parse_sse(raw)
        events = [e for e in items if not isinstance(e, str)]
        prefix = ": hermes.tool_progress "  # SSE comments: every parser skips them (issue 34)
        progress = [json.loads(c[len(prefix):]) for c in items if isinstance(c, str) and c.startswith(prefix)]
        assert not any(e.event == "hermes.tool_progress" for e in events)
        if not opted_in:
            assert progress == []
            continue
        assert [p["type"] for p in progress] == ["tool.finished"] or \
            [p["type"] for p in progress] == ["tool.started", "tool.finished"]
        assert progress[-1]["name"] == "calculate" and progress[-1]["ok"] is True and "42" in progress[-1]["summary"]
        assert all("sequence_number" not in p for p in progress)
        others = [e.json() for e in events if e.data != "[DONE]"]
        if path == "/v1/responses":
            assert [o["sequence_number"] for o in others] == list(range(len(others)))
        assert "42" in raw.decode()



async def test_keepalive_pings_while_a_slow_tool_runs():
    """The model calls a tool that takes a while: the client hears pings, then the tool's answer."""
    from hermes_gateway import hookimpl
    from hermes_gateway._core.tools import Tool

    class SlowTool:
        @hookimpl
        def register_tools(self, register):
            async def ponder(topic: str = "") -> str:
                await asyncio.sleep(0.4)
                return f"pondered {topic}"
            register(Tool(name="ponder", description="think slowly", function=ponder,
                          parameters={"type": "object", "properties": {"topic": {"type": "string"}}}))

    cfg = gateway_config(api={"keepalive_interval": 0.05, "tool_progress_events": True})
    async with running_gateway(cfg, extra=[SlowTool()]) as gw:
        body = {"model": MODEL, "stream": True,
                "messages": [{"role": "user", "content": 'tool: ponder {"topic": "tea"}'}]}
        _, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", body)
    items = parse_sse(raw)
    finished = next(i for i, e in enumerate(items) if isinstance(e, str) and "tool.finished" in e)  # (comments)
    started = next(i for i, e in enumerate(items) if isinstance(e, str) and "tool.started" in e)
    assert sum(1 for e in items[started:finished] if e == ": ping") >= 3
    contents, errors = chat_pieces([e for e in items if not isinstance(e, str) and e.event is None])
    assert errors == [] and "pondered tea" in "".join(contents)
