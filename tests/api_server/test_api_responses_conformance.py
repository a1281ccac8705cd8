"""Responses API conformance: the real openai SDK, the SDK's event type adapter, and the raw bytes."""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from api_helpers import MODEL, SSEEvent, gateway_config, parse_sse, post_raw, running_gateway

TEXT = "Streaming replies, one word at a time."
EVENTS = TypeAdapter(ResponseStreamEvent)


@pytest.fixture
def client(gateway):
    return openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)


async def test_sdk_stream_final_response(client):
    async with client.responses.stream(model=MODEL, input=f"echo: {TEXT}") as stream:
        events = [event async for event in stream]
        final = await stream.get_final_response()
    assert final.output_text == TEXT
    assert final.status == "completed" and final.usage.total_tokens > 0
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == TEXT and len(deltas) == len(TEXT.split(" "))


async def test_sdk_create_stream_and_non_stream(client):
    stream = await client.responses.create(model=MODEL, input=f"echo: {TEXT}", stream=True)
    types = [event.type async for event in stream]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    response = await client.responses.create(model=MODEL, input=[
        {"role": "user", "content": [{"type": "input_text", "text": f"echo: {TEXT}"}]}])
    assert response.output_text == TEXT and response.status == "completed"


async def test_raw_wire_full_ordered_sequence_dense_numbers_and_strict_types(gateway):
    status, headers, raw = await post_raw(f"{gateway.url}/v1/responses",
                                          {"model": MODEL, "input": f"echo: {TEXT}", "stream": True})
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    events = parse_sse(raw)
    assert all(isinstance(e, SSEEvent) for e in events)
    bodies = [e.json() for e in events]
    assert [e.event for e in events] == [b["type"] for b in bodies]  # event: line names the data's type
    assert [b["sequence_number"] for b in bodies] == list(range(len(bodies)))
    parsed = [EVENTS.validate_python(b) for b in bodies]  # strict: every required field present and typed
    types = [p.type for p in parsed]
    n = types.count("response.output_text.delta")
    assert types == (["response.created", "response.in_progress", "response.output_item.added",
                      "response.content_part.added"] + ["response.output_text.delta"] * n
                     + ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                        "response.completed"])
    deltas = "".join(p.delta for p in parsed if p.type == "response.output_text.delta")
    done = parsed[-4]
    completed = parsed[-1].response
    assert deltas == done.text == parsed[-3].part.text == completed.output_text == TEXT
    assert parsed[0].response.id == completed.id and completed.status == "completed"
    item_ids = {p.item_id for p in parsed if hasattr(p, "item_id")} | {parsed[2].item.id, parsed[-2].item.id}
    assert len(item_ids) == 1
    assert all(getattr(p, "output_index", 0) == 0 and getattr(p, "content_index", 0) == 0 for p in parsed)


async def test_raw_non_streaming_body_validates(gateway):
    status, _, raw = await post_raw(f"{gateway.url}/v1/responses", {"model": MODEL, "input": f"echo: {TEXT}"})
    assert status == 200
    response = Response.model_validate(json.loads(raw))
    assert response.output_text == TEXT


async def test_instructions_are_sent_as_the_system_message(upstream):
    upstream.reply = lambda body: f"system={body['messages'][0]['content']}"
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        response = await client.responses.create(model=MODEL, input="hi", instructions="talk like a pirate")
    assert response.output_text == "system=talk like a pirate"


async def test_previous_response_id_continues_the_conversation(upstream):
    """The upstream echoes the conversation it received, so continuity is visible in the reply."""
    upstream.reply = lambda body: " | ".join(f"{m['role']}:{m['content']}" for m in body["messages"])
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        first = await client.responses.create(model=MODEL, input="my name is Ada", instructions="be kind")
        assert first.output_text == "system:be kind | user:my name is Ada"
        async with client.responses.stream(model=MODEL, input="what is my name?",
                                           previous_response_id=first.id) as stream:
            second = await stream.get_final_response()
        assert second.previous_response_id == first.id
        # instructions do not carry over (as in OpenAI's API); the earlier turn does
        assert second.output_text == ("user:my name is Ada | assistant:system:be kind | user:my name is Ada | "
                                      "user:what is my name?")
        third = await client.responses.create(model=MODEL, input="and now?", previous_response_id=second.id)
        sent = upstream.requests[-1]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
        assert [m["content"] for m in sent if m["role"] == "user"] == ["my name is Ada", "what is my name?",
                                                                       "and now?"]
        assert sent[3]["content"] == second.output_text and third.output_text.endswith("user:and now?")
        assert (await client.responses.retrieve(second.id)).output_text == second.output_text

        unstored = await client.responses.create(model=MODEL, input="forget me", store=False)
        with pytest.raises(openai.NotFoundError) as info:
            await client.responses.create(model=MODEL, input="x", previous_response_id=unstored.id)
        assert info.value.body["code"] == "previous_response_not_found"
        await client.responses.delete(first.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(first.id)


async def test_unknown_events_never_appear_by_default(gateway):
    _, _, raw = await post_raw(f"{gateway.url}/v1/responses",
                               {"model": MODEL, "input": 'tool: calculate {"expression": "6 * 7"}', "stream": True})
    events = parse_sse(raw)
    assert all(e.event.startswith("response.") for e in events)
    assert "42" in events[-1].json()["response"]["output"][0]["content"][0]["text"]
