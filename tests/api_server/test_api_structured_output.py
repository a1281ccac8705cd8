"""Structured output, token limits and the other model parameters: forwarded, and answered as OpenAI does.

``.parse()`` returns the schema's object (the demo model writes JSON valid
against it); a reply cut by ``max_tokens`` says ``length`` (Responses:
``incomplete``); the parameters reach the upstream request (a scripted
upstream records it); a JSON reply is passed through unaltered by the
reasoning filter.
"""

from __future__ import annotations

import json

import jsonschema
import openai
import pytest
from pydantic import BaseModel

from api_helpers import MODEL, ScriptedUpstream, gateway_config, parse_sse, post_raw, running_gateway


class Person(BaseModel):
    name: str
    age: int
    tags: list[str]


SCHEMA = {"type": "object", "additionalProperties": False, "required": ["id", "kind", "scores", "nested"],
          "properties": {"id": {"type": "integer", "minimum": 10}, "kind": {"enum": ["a", "b"]},
                         "scores": {"type": "array", "minItems": 2, "items": {"type": "number", "maximum": 0}},
                         "nested": {"$ref": "#/$defs/inner"}},
          "$defs": {"inner": {"type": "object", "required": ["when", "ok"], "additionalProperties": False,
                              "properties": {"when": {"type": "string", "format": "date"},
                                             "ok": {"type": ["boolean", "null"]}}}}}


@pytest.fixture
async def gw():
    async with running_gateway(gateway_config()) as gateway:
        yield gateway


@pytest.fixture
def client(gw) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


async def test_chat_parse_returns_the_schemas_object(client):
    completion = await client.chat.completions.parse(model=MODEL, messages=[{"role": "user", "content": "Ann"}],
                                                     response_format=Person)
    person = completion.choices[0].message.parsed
    assert isinstance(person, Person) and person.name == "Ann"


async def test_responses_parse_returns_the_schemas_object(client):
    response = await client.responses.parse(model=MODEL, input="Bob", text_format=Person)
    assert isinstance(response.output_parsed, Person)
    assert response.text.format.type == "json_schema"


@pytest.mark.parametrize("stream", [False, True])
async def test_json_schema_reply_validates_against_the_schema(gw, stream):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "go"}], "stream": stream,
            "response_format": {"type": "json_schema", "json_schema": {"name": "thing", "strict": True,
                                                                       "schema": SCHEMA}}}
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", body)
    assert status == 200
    if stream:
        text = "".join(e.json()["choices"][0]["delta"].get("content") or "" for e in parse_sse(raw)
                       if not isinstance(e, str) and e.data != "[DONE]" and e.json()["choices"])
    else:
        text = json.loads(raw)["choices"][0]["message"]["content"]
    jsonschema.validate(json.loads(text), SCHEMA)


async def test_json_object_reply_is_json(client):
    completion = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}],
                                                      response_format={"type": "json_object"})
    assert isinstance(json.loads(completion.choices[0].message.content), dict)


@pytest.mark.parametrize("stream", [False, True])
async def test_max_tokens_cut_says_length(client, stream):
    kwargs = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
    if stream:  # (the SDK's .stream() helper raises LengthFinishReasonError itself on a cut; read the chunks)
        chunks = [c async for c in await client.chat.completions.create(**kwargs, stream=True) if c.choices]
        finish = chunks[-1].choices[0].finish_reason
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
    else:
        completion = await client.chat.completions.create(**kwargs)
        finish, text = completion.choices[0].finish_reason, completion.choices[0].message.content
    assert finish == "length"
    assert text == "Hello! I am the"


@pytest.mark.parametrize("stream", [False, True])
async def test_max_output_tokens_cut_is_incomplete(client, stream):
    if stream:  # (the SDK's .stream() helper expects response.completed; OpenAI sends response.incomplete too)
        events = [e async for e in await client.responses.create(model=MODEL, input="hello", max_output_tokens=4,
                                                                  stream=True)]
        assert events[-1].type == "response.incomplete"
        response = events[-1].response
    else:
        response = await client.responses.create(model=MODEL, input="hello", max_output_tokens=4)
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "Hello! I am the"
    assert response.max_output_tokens == 4


async def test_parameters_reach_the_upstream():
    async with ScriptedUpstream() as upstream:
        upstream.reply = lambda body: '{"a": "<think>kept</think>"}'
        async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
            fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}, "strict": True}}
            completion = await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "x"}], temperature=0.2, top_p=0.9, seed=7,
                stop=["END"], max_completion_tokens=99, user="u1", metadata={"k": "v"}, response_format=fmt,
                presence_penalty=0.5, frequency_penalty=-0.5, logit_bias={"50256": -100})
            sent = upstream.requests[-1]
            assert {k: sent[k] for k in ("temperature", "top_p", "seed", "stop", "max_completion_tokens", "user",
                                         "metadata", "response_format", "presence_penalty", "frequency_penalty",
                                         "logit_bias")} == {
                "temperature": 0.2, "top_p": 0.9, "seed": 7, "stop": ["END"], "max_completion_tokens": 99,
                "user": "u1", "metadata": {"k": "v"}, "response_format": fmt, "presence_penalty": 0.5,
                "frequency_penalty": -0.5, "logit_bias": {"50256": -100}}
            # the model's JSON, unaltered by the reasoning filter
            assert completion.choices[0].message.content == '{"a": "<think>kept</think>"}'
            response = await client.responses.create(
                model=MODEL, input="x", max_output_tokens=50, temperature=1.5,
                text={"format": {"type": "json_schema", "name": "b", "schema": {"type": "object"}}})
            sent = upstream.requests[-1]
            assert sent["max_completion_tokens"] == 50 and sent["temperature"] == 1.5
            assert sent["response_format"] == {"type": "json_schema",
                                               "json_schema": {"name": "b", "schema": {"type": "object"}}}
            assert response.output_text == '{"a": "<think>kept</think>"}'


async def test_plain_requests_send_the_upstream_nothing_new():
    """Chats and plain API requests: the upstream body is what it always was."""
    async with ScriptedUpstream() as upstream:
        upstream.reply = lambda body: "fine"
        async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
            await post_raw(f"{gw.url}/v1/chat/completions", {"model": MODEL, "messages": [{"role": "user",
                                                                                             "content": "x"}]})
    assert set(upstream.requests[-1]) <= {"model", "messages", "tools", "stream", "stream_options"}
