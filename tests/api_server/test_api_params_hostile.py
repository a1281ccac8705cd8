"""Hostile input on every new parameter path: wrong types, huge schemas, deep nesting. Always a 4xx, never a 5xx.

And every parameter of OpenAI's reference that the gateway cannot honour is
refused with a 400 naming it (never dropped silently).
"""

from __future__ import annotations

import json

import pytest

from api_helpers import MODEL, gateway_config, post_raw, running_gateway
from hermes_gateway._core.api_server.params import CHAT_REFUSED, RESPONSES_REFUSED

USER = [{"role": "user", "content": "hi"}]


def nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def wide(n: int) -> dict:
    return {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(n)}}


def tool(parameters) -> dict:
    return {"type": "function", "function": {"name": "t", "parameters": parameters}}


CHAT_HOSTILE = [
    ({"tools": {"a": 1}}, "tools"),
    ({"tools": [None]}, "tools[0]"),
    ({"tools": [{"type": "function"}]}, "tools[0].function"),
    ({"tools": [{"type": "function", "function": {"name": 5}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "n" * 65}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "t", "description": ["x"]}}]},
     "tools[0].function.description"),
    ({"tools": [{"type": "function", "function": {"name": "t", "strict": "yes"}}]}, "tools[0].function.strict"),
    ({"tools": [tool(nested(100))]}, "tools[0].function.parameters"),
    ({"tools": [tool(wide(25_000))]}, "tools[0].function.parameters"),
    ({"tools": [tool({"type": "object"}) | {"function": {"name": f"t{i}"}} for i in range(129)]}, "tools"),
    ({"tool_choice": 5}, "tool_choice"),
    ({"tool_choice": {"type": "function"}}, "tool_choice"),
    ({"tools": [tool({})], "tool_choice": {"type": "function", "function": {"name": ["t"]}}}, "tool_choice"),
    ({"parallel_tool_calls": "true"}, "parallel_tool_calls"),
    ({"response_format": "json"}, "response_format"),
    ({"response_format": {"type": "xml"}}, "response_format.type"),
    ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}, "response_format.json_schema.schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x y", "schema": {}}}},
     "response_format.json_schema.name"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": nested(100)}}},
     "response_format.json_schema.schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": wide(25_000)}}},
     "response_format.json_schema.schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": [1]}}},
     "response_format.json_schema.schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": 1}}},
     "response_format.json_schema.strict"),
    ({"max_tokens": -1}, "max_tokens"),
    ({"max_completion_tokens": 2 ** 40}, "max_completion_tokens"),
    ({"max_completion_tokens": 1.5}, "max_completion_tokens"),
    ({"temperature": 3}, "temperature"),
    ({"top_p": -0.1}, "top_p"),
    ({"seed": "7"}, "seed"),
    ({"seed": 2 ** 70}, "seed"),
    ({"stop": 5}, "stop"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"stop": [""]}, "stop"),
    ({"user": {"id": 1}}, "user"),
    ({"user": "u" * 10_000}, "user"),
    ({"metadata": []}, "metadata"),
    ({"metadata": {f"k{i}": "v" for i in range(17)}}, "metadata"),
    ({"metadata": {"k": 5}}, "metadata"),
    ({"logit_bias": {"abc": 1}}, "logit_bias"),
    ({"logit_bias": {"1": 1000}}, "logit_bias"),
    ({"presence_penalty": 9}, "presence_penalty"),
    ({"service_tier": "gold"}, "service_tier"),
    ({"reasoning_effort": 3}, "reasoning_effort"),
    ({"verbosity": "loud"}, "verbosity"),
    ({"store": "yes"}, "store"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": "x"}, *USER]}, "messages[0].tool_calls"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "t",
                                                                                                   "arguments": {}}}]},
                   *USER]}, "messages[0].tool_calls[0].function.arguments"),
    ({"messages": [{"role": "user", "content": "x", "tool_calls": [{"id": "c"}]}]}, "messages[0].tool_calls"),
    ({"messages": [{"role": "tool", "tool_call_id": 5, "content": "r"}]}, "messages[0].tool_call_id"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:" + "A" * 100}}]}]},
     "messages[0].content[0].image_url.url"),
]

RESPONSES_HOSTILE = [
    ({"tools": [{"type": "function", "name": "t", "parameters": nested(100)}]}, "tools[0].parameters"),
    ({"tools": [{"type": "file_search"}]}, "tools[0].type"),
    ({"tool_choice": {"type": "function", "name": "nope"}}, "tool_choice"),
    ({"text": "json"}, "text"),
    ({"text": {"format": {"type": "json_schema", "name": "x", "schema": nested(100)}}}, "text.format.schema"),
    ({"text": {"format": {"type": "json_schema", "name": "x"}}}, "text.format.schema"),
    ({"text": {"format": {"type": "yaml"}}}, "text.format.type"),
    ({"text": {"colour": "red"}}, "text.colour"),
    ({"text": {"verbosity": 1}}, "text.verbosity"),
    ({"max_output_tokens": 0}, "max_output_tokens"),
    ({"max_output_tokens": "10"}, "max_output_tokens"),
    ({"reasoning": "high"}, "reasoning"),
    ({"reasoning": {"effort": "maximal"}}, "reasoning.effort"),
    ({"reasoning": {"summary": "auto"}}, "reasoning.summary"),
    ({"truncation": "sometimes"}, "truncation"),
    ({"stream_options": []}, "stream_options"),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "t", "arguments": {"a": 1}}]}, "input[0].arguments"),
    ({"input": [{"type": "function_call_output", "call_id": "c", "output": {"a": 1}}]}, "input[0].output"),
    ({"input": [{"type": "function_call_output", "call_id": "never-called", "output": "r"}]}, "input[0].call_id"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file_1"}]}]},
     "input[0].content[0].file_id"),
]


@pytest.fixture
async def gw():
    async with running_gateway(gateway_config()) as gateway:
        yield gateway


async def refused(gw, path: str, body: dict) -> dict:
    status, _, raw = await post_raw(f"{gw.url}{path}", body)
    assert 400 <= status < 500, (status, raw[:300])
    error = json.loads(raw)["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    return error


@pytest.mark.parametrize("extra, param", CHAT_HOSTILE, ids=[p for _, p in CHAT_HOSTILE])
async def test_chat_hostile_parameters_are_a_4xx_naming_them(gw, extra, param):
    error = await refused(gw, "/v1/chat/completions", {"model": MODEL, "messages": USER, **extra})
    assert error["param"] == param


@pytest.mark.parametrize("extra, param", RESPONSES_HOSTILE, ids=[p for _, p in RESPONSES_HOSTILE])
async def test_responses_hostile_parameters_are_a_4xx_naming_them(gw, extra, param):
    error = await refused(gw, "/v1/responses", {"model": MODEL, "input": "hi", **extra})
    assert error["param"] == param


REFUSED_VALUES = {"audio": {"voice": "alloy", "format": "mp3"}, "modalities": ["text", "audio"],
                  "prediction": {"type": "content", "content": "x"}, "web_search_options": {},
                  "functions": [{"name": "f"}], "function_call": "auto", "logprobs": True, "top_logprobs": 3,
                  "moderation": {}, "background": True, "background_options": {}, "conversation": "conv_1",
                  "prompt": {"id": "pmpt_1"}, "include": ["message.output_text.logprobs"], "max_tool_calls": 3,
                  "context_management": [{}], "access_programs": [], "image": {}}


@pytest.mark.parametrize("name", sorted(CHAT_REFUSED))
async def test_each_refused_chat_parameter_is_a_400_naming_it(gw, name):
    error = await refused(gw, "/v1/chat/completions", {"model": MODEL, "messages": USER, name: REFUSED_VALUES[name]})
    assert error["param"] == name and error["code"] == "unsupported_parameter"


@pytest.mark.parametrize("name", sorted(RESPONSES_REFUSED))
async def test_each_refused_responses_parameter_is_a_400_naming_it(gw, name):
    error = await refused(gw, "/v1/responses", {"model": MODEL, "input": "hi", name: REFUSED_VALUES[name]})
    assert error["param"] == name and error["code"] == "unsupported_parameter"


async def test_harmless_values_of_refused_parameters_are_accepted(gw):
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {
        "model": MODEL, "messages": [{"role": "user", "content": "echo: ok"}], "logprobs": False, "n": 1,
        "modalities": ["text"]})
    assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "ok"
    status, _, raw = await post_raw(f"{gw.url}/v1/responses", {
        "model": MODEL, "input": "echo: ok", "include": [], "background": False, "truncation": "auto"})
    assert status == 200, raw


async def test_a_big_but_allowed_schema_is_answered_quickly(gw):
    """Deep (57 JSON levels) and wide (5,000 properties) schemas within the bounds: the demo builds its value within
    its own budget; the reply is a 200."""
    for schema in (nested(28), wide(5_000)):
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {
            "model": MODEL, "messages": USER, "response_format": {
                "type": "json_schema", "json_schema": {"name": "x", "schema": schema}}})
        assert status == 200, raw[:300]
        json.loads(json.loads(raw)["choices"][0]["message"]["content"])
