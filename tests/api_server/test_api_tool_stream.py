"""A client tool call's arguments stream to the client as the upstream writes them, on both endpoints (issue 34).

The upstream (a scripted one on 127.0.0.1) streams a call of the client's
``get_weather`` in 24 pieces over about a second; the client is the real
``openai`` SDK, streaming. Before, both endpoints held the arguments until
the model had finished and sent them in one piece at the end.
"""

from __future__ import annotations

import asyncio
import json
import time

import openai
import pytest

from api_helpers import MODEL, ScriptedUpstream, gateway_config, running_gateway

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                            "notes": {"type": "string"}}}}}
ARGUMENTS = json.dumps({"city": "Paris", "notes": "bring an umbrella, it will rain all afternoon and evening"})
PIECES = [ARGUMENTS[i:i + 3] for i in range(0, len(ARGUMENTS), 3)][:24]
PIECES[-1:] = [ARGUMENTS[3 * 23:]]
assert "".join(PIECES) == ARGUMENTS and len(PIECES) == 24


def streaming_upstream(upstream: ScriptedUpstream, sent: list[float]) -> None:
    """Every request is answered with a call of get_weather, its arguments in 24 pieces ~1 s apart in all."""
    async def script(body: dict, s) -> None:
        await s.role()
        await s.response.write(s._chunk({"tool_calls": [{"index": 0, "id": "call_w", "type": "function",
                                                         "function": {"name": "get_weather", "arguments": ""}}]}))
        for piece in PIECES:
            sent.append(time.monotonic())
            await s.response.write(s._chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
            await asyncio.sleep(1 / 24)
        await s.response.write(s._chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    upstream.stream_script = script


def assert_streamed(arrivals: list[tuple[float, str]], sent: list[float]) -> None:
    assert "".join(piece for _, piece in arrivals) == ARGUMENTS
    assert len(arrivals) >= 20, f"the arguments came in {len(arrivals)} pieces"
    first = arrivals[0][0]
    # Ordered by events rather than a stopwatch: the first piece is at the client before the upstream has
    # sent its fourth (~125 ms later); "all at the end" arrives after the last.
    assert first < sent[3], f"first piece {first - sent[0]:.3f} s after the upstream sent it"
    print(f"first argument piece at the client {1000 * (first - sent[0]):.1f} ms after the upstream sent it")


@pytest.fixture
async def client(upstream):
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        yield openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


async def test_chat_completions_streams_the_arguments_as_they_come(upstream, client):
    sent: list[float] = []
    streaming_upstream(upstream, sent)
    # The SDK's accumulator agrees (and the SDK's chat models are imported before anything is timed).
    async with client.chat.completions.stream(model=MODEL, tools=[WEATHER],
                                              messages=[{"role": "user", "content": "first"}]) as helper:
        final = await helper.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.arguments == ARGUMENTS
    sent.clear()
    arrivals: list[tuple[float, str]] = []
    names = []
    stream = await client.chat.completions.create(model=MODEL, stream=True, tools=[WEATHER],
                                                  messages=[{"role": "user", "content": "weather in Paris?"}])
    finish = None
    async for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        for call in choice.delta.tool_calls or ():
            if call.function and call.function.name:
                names.append(call.function.name)
            if call.function and call.function.arguments:
                arrivals.append((time.monotonic(), call.function.arguments))
        finish = choice.finish_reason or finish
    assert names == ["get_weather"] and finish == "tool_calls"
    assert_streamed(arrivals, sent)


async def test_responses_streams_the_arguments_as_they_come(upstream, client):
    sent: list[float] = []
    streaming_upstream(upstream, sent)
    # The SDK's own accumulator agrees (and its Responses models are imported before anything is timed: the
    # first import holds this process's event loop, the upstream's and the gateway's too, for a while).
    tools = [{"type": "function", **WEATHER["function"]}]
    async with client.responses.stream(model=MODEL, input="first", tools=tools) as helper:
        final = await helper.get_final_response()
    assert final.output[0].arguments == ARGUMENTS
    sent.clear()
    arrivals: list[tuple[float, str]] = []
    added: dict[int, str] = {}
    done = None
    stream = await client.responses.create(model=MODEL, stream=True, input="weather in Paris?", tools=tools)
    async for event in stream:
        if event.type == "response.output_item.added":
            added[event.output_index] = event.item.type
        elif event.type == "response.function_call_arguments.delta":
            assert added[event.output_index] == "function_call" and event.item_id == "fc_call_w"
            arrivals.append((time.monotonic(), event.delta))
        elif event.type == "response.function_call_arguments.done":
            done = event
        elif event.type == "response.completed":
            (item,) = event.response.output
            assert item.type == "function_call" and item.arguments == ARGUMENTS and item.name == "get_weather"
    assert done is not None and done.arguments == ARGUMENTS and done.output_index == 0
    assert_streamed(arrivals, sent)
