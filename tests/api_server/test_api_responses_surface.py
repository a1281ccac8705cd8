"""The rest of the Responses surface clients call: input items, delete; and tool progress only on request."""

from __future__ import annotations

import json

import openai
import pytest

from api_helpers import MODEL, gateway_config, parse_sse, post_raw, running_gateway

CALC = 'tool: calculate {"expression": "6 * 7"}'


@pytest.fixture
async def gw():
    async with running_gateway(gateway_config()) as gateway:
        yield gateway


@pytest.fixture
def client(gw):
    return openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


async def test_input_items_lists_what_the_request_sent(client):
    response = await client.responses.create(model=MODEL, input=[
        {"role": "developer", "content": "be brief"}, {"role": "user", "content": "echo: one"}])
    newest_first = await client.responses.input_items.list(response.id)
    assert [(i.role, i.content[0].text) for i in newest_first.data] == [("user", "echo: one"),
                                                                        ("developer", "be brief")]
    assert newest_first.has_more is False
    page = await client.responses.input_items.list(response.id, order="asc", limit=1)
    assert [i.role for i in page.data] == ["developer"] and page.has_more is True
    rest = await client.responses.input_items.list(response.id, order="asc", after=page.data[0].id)
    assert [i.role for i in rest.data] == ["user"]
    # the stored response shows no bookkeeping of the gateway's
    fetched = await client.responses.retrieve(response.id)
    assert fetched.output_text == "one" and "_hermes_input_items" not in fetched.model_dump()


async def test_input_items_of_a_tool_continuation(client):
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    first = await client.responses.create(model=MODEL, input="use lookup", tools=[tool])
    call = first.output[0]
    second = await client.responses.create(model=MODEL, previous_response_id=first.id, tools=[tool], input=[
        {"type": "function_call_output", "call_id": call.call_id, "output": "found"}])
    items = await client.responses.input_items.list(second.id)
    assert [(i.type, i.call_id, i.output) for i in items.data] == [("function_call_output", call.call_id, "found")]


async def test_delete_then_gone(client, gw):
    response = await client.responses.create(model=MODEL, input="echo: bye")
    deleted = await client.responses.delete(response.id)
    assert deleted is None or getattr(deleted, "deleted", True)
    for path in (f"/v1/responses/{response.id}", f"/v1/responses/{response.id}/input_items"):
        with pytest.raises(openai.NotFoundError):
            await client.get(path, cast_to=object)


@pytest.mark.parametrize("query, param", [("limit=0", "limit"), ("limit=101", "limit"), ("limit=x", "limit"),
                                          ("order=sideways", "order"), ("after=nope", "after")])
async def test_bad_input_items_paging_is_a_400(client, gw, query, param):
    response = await client.responses.create(model=MODEL, input="echo: x")
    status, _, raw = await get(gw, f"/v1/responses/{response.id}/input_items?{query}")
    assert status == 400 and json.loads(raw)["error"]["param"] == param


async def get(gw, path):
    import aiohttp
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{gw.url}{path}") as r:
            return r.status, dict(r.headers), await r.read()


def progress_of(raw: bytes) -> list[dict]:
    prefix = ": hermes.tool_progress "  # SSE comment lines (issue 34)
    return [json.loads(c[len(prefix):]) for c in parse_sse(raw) if isinstance(c, str) and c.startswith(prefix)]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
@pytest.mark.parametrize("how", ["field", "header", "none"])
async def test_tool_progress_only_for_a_request_that_asks(gw, path, how):
    body = {"model": MODEL, "stream": True, **({"input": CALC} if path == "/v1/responses" else
                                                {"messages": [{"role": "user", "content": CALC}]})}
    headers = {}
    if how == "field":
        body["hermes_tool_progress"] = True
    elif how == "header":
        headers["X-Hermes-Tool-Progress"] = "true"
    status, _, raw = await post_raw(f"{gw.url}{path}", body, headers=headers)
    assert status == 200
    assert bool(progress_of(raw)) is (how != "none")


async def test_server_default_on_keeps_openais_quickstart_loop_working():
    async with running_gateway(gateway_config(api={"tool_progress_events": True})) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
        stream = await client.chat.completions.create(model=MODEL, stream=True,
                                                      messages=[{"role": "user", "content": CALC}])
        text = ""
        async for chunk in stream:  # the loop of OpenAI's quickstart
            if chunk.choices[0].delta.content is not None:
                text += chunk.choices[0].delta.content
        assert "42" in text
        # and a request may still say no
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {
            "model": MODEL, "stream": True, "hermes_tool_progress": False,
            "messages": [{"role": "user", "content": CALC}]})
        assert progress_of(raw) == []


@pytest.mark.parametrize("body, headers, param", [
    ({"hermes_tool_progress": "yes"}, {}, "hermes_tool_progress"),
    ({}, {"X-Hermes-Tool-Progress": "maybe"}, "X-Hermes-Tool-Progress"),
])
async def test_bad_progress_request_is_a_400(gw, body, headers, param):
    status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {
        "model": MODEL, "messages": [{"role": "user", "content": "x"}], **body}, headers=headers)
    assert status == 400 and json.loads(raw)["error"]["param"] == param
