"""Client tools passed through: the model is offered them, a call ends the turn the OpenAI way, results continue it.

Driven with the ``openai`` SDK (and raw SSE where the wire shape is the
point) against a gateway whose model is the demo model.
"""

from __future__ import annotations

import json
from typing import AsyncIterator

import openai
import pytest

from api_helpers import MODEL, gateway_config, parse_sse, post_raw, running_gateway

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
FLAT_WEATHER = {"type": "function", **WEATHER["function"]}
ASK = [{"role": "user", "content": "Use get_weather for Paris"}]


@pytest.fixture
async def gw():
    async with running_gateway(gateway_config()) as gateway:
        yield gateway


@pytest.fixture
async def client(gw) -> AsyncIterator[openai.AsyncOpenAI]:
    yield openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


async def test_chat_tool_call_ends_the_turn_and_the_result_continues_it(client):
    first = await client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"]
    messages = [*ASK, choice.message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": "rainy, 9 degrees"}]
    second = await client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER])
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == "The tool get_weather returned: rainy, 9 degrees"


async def test_chat_streamed_tool_call_is_shaped_as_openai_streams_it(gw, client):
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions",
                                    {"model": MODEL, "messages": ASK, "tools": [WEATHER], "stream": True})
    assert status == 200
    chunks = [e.json() for e in parse_sse(raw) if not isinstance(e, str) and e.data != "[DONE]"]
    pieces = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"][0]["delta"].get("tool_calls")]
    assert pieces[0]["index"] == 0 and pieces[0]["id"] and pieces[0]["type"] == "function"
    assert pieces[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert all(set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in pieces[1:])
    assert json.loads("".join(p["function"]["arguments"] for p in pieces))["city"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    # and the SDK's own accumulator agrees
    async with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER]) as stream:
        final = await stream.get_final_completion()
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.choices[0].message.tool_calls[0].function.name == "get_weather"


async def test_responses_function_call_item_and_function_call_output_continue(client):
    first = await client.responses.create(model=MODEL, input="Use get_weather for Paris", tools=[FLAT_WEATHER])
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"]
    assert first.status == "completed" and first.tools[0].name == "get_weather"
    # continued by previous_response_id
    second = await client.responses.create(model=MODEL, previous_response_id=first.id, tools=[FLAT_WEATHER],
                                           input=[{"type": "function_call_output", "call_id": call.call_id,
                                                   "output": "foggy"}])
    assert second.output_text == "The tool get_weather returned: foggy"
    # and statelessly, with the call item sent back
    third = await client.responses.create(model=MODEL, tools=[FLAT_WEATHER], store=False, input=[
        {"role": "user", "content": "Use get_weather for Paris"},
        {"type": "function_call", "call_id": call.call_id, "name": "get_weather", "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "hail"}])
    assert third.output_text == "The tool get_weather returned: hail"


async def test_responses_streamed_function_call_events(client):
    async with client.responses.stream(model=MODEL, input="Use get_weather for Oslo", tools=[FLAT_WEATHER]) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_response()
    assert "response.function_call_arguments.delta" in kinds and "response.function_call_arguments.done" in kinds
    assert kinds[-1] == "response.completed"
    (call,) = final.output
    assert call.type == "function_call" and json.loads(call.arguments)["city"]


async def test_gateway_tools_still_run_server_side_in_the_same_turn():
    async with running_gateway(gateway_config(api={"gateway_tools": "always"})) as gateway:
        client = openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)
        reply = await client.chat.completions.create(
            model=MODEL, tools=[WEATHER],
            messages=[{"role": "user", "content": 'tool: calculate {"expression": "6 * 7"}'}])
    assert reply.choices[0].finish_reason == "stop"
    assert "42" in reply.choices[0].message.content


async def test_tool_choice_none_keeps_the_model_from_calling(client):
    reply = await client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], tool_choice="none")
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "stop"


async def test_named_tool_choice_and_parallel_calls(client):
    other = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    named = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}],
                                                 tools=[WEATHER, other],
                                                 tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert [c.function.name for c in named.choices[0].message.tool_calls] == ["get_time"]
    both = [{"role": "user", "content": "use get_weather and use get_time"}]
    parallel = await client.chat.completions.create(model=MODEL, messages=both, tools=[WEATHER, other])
    assert [c.function.name for c in parallel.choices[0].message.tool_calls] == ["get_weather", "get_time"]
    single = await client.chat.completions.create(model=MODEL, messages=both, tools=[WEATHER, other],
                                                  parallel_tool_calls=False)
    assert len(single.choices[0].message.tool_calls) == 1


@pytest.mark.parametrize("tools, choice, param", [
    ("garbage", None, "tools"),
    ([WEATHER, WEATHER], None, "tools[1].function.name"),
    ([{"type": "web_search"}], None, "tools[0].type"),
    ([{"type": "function", "function": {"name": "bad name!"}}], None, "tools[0].function.name"),
    ([{"type": "function", "function": {"name": "x", "parameters": "nope"}}], None, "tools[0].function.parameters"),
    ([WEATHER], {"type": "function", "function": {"name": "unknown"}}, "tool_choice"),
    ([WEATHER], "sometimes", "tool_choice"),
])
async def test_bad_tools_are_a_400_naming_the_parameter(gw, tools, choice, param):
    body = {"model": MODEL, "messages": ASK}
    if tools is not None:
        body["tools"] = tools
    if choice is not None:
        body["tool_choice"] = choice
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", body)
    assert status == 400, raw
    assert json.loads(raw)["error"]["param"] == param


async def test_a_tool_result_without_its_call_is_a_400(gw):
    body = {"model": MODEL, "messages": [*ASK, {"role": "tool", "tool_call_id": "call_x", "content": "r"}]}
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", body)
    assert status == 400 and json.loads(raw)["error"]["param"] == "messages[1].tool_call_id"


async def test_a_client_tool_named_like_a_gateway_tool_is_taken(gw):
    """(issue 34) With api_server.gateway_tools: auto the gateway's own are not offered beside the client's."""
    body = {"model": MODEL, "input": "hi", "tools": [{"type": "function", "name": "calculate"}]}
    status, _, raw = await post_raw(f"{gw.url}/v1/responses", body)
    assert status == 200, raw


async def test_required_without_tools_is_a_400_when_no_gateway_tool_is_offered():
    async with running_gateway(gateway_config(api={"gateway_tools": "never"})) as gateway:
        status, _, raw = await post_raw(f"{gateway.url}/v1/chat/completions",
                                        {"model": MODEL, "messages": ASK, "tool_choice": "required"})
    assert status == 400 and json.loads(raw)["error"]["param"] == "tool_choice"
