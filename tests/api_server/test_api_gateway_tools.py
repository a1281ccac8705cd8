"""The gateway's own tools in API turns (issue 34): ``tool_choice`` binds the first model call only,
``api_server.gateway_tools`` says when they are offered, a clash renames the gateway's, nothing is dropped.

The upstream is a scripted one on 127.0.0.1 that records every request; it calls the gateway's
``calculate`` tool whenever it is forced to (or told to), else answers in text.
"""

from __future__ import annotations

import json
import logging

import openai
import pytest

from api_helpers import MODEL, ScriptedUpstream, gateway_config, parse_sse, post_raw, running_gateway

ASK = [{"role": "user", "content": "what is 6 * 7?"}]
CLIENT_CALC = {"type": "function", "function": {"name": "calculate", "description": "the client's own",
               "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or ()]


def calls_when_forced(upstream: ScriptedUpstream, always: bool = False) -> None:
    """A model that obeys tool_choice: forced, it calls calculate (again and again); on auto it answers."""
    async def script(body: dict, s) -> None:
        await s.role()
        if always or body.get("tool_choice") == "required":
            await s.response.write(s._chunk({"tool_calls": [{
                "index": 0, "id": f"call_{len(upstream.requests)}", "type": "function",
                "function": {"name": "calculate", "arguments": json.dumps({"expression": "6 * 7"})}}]}))
            await s.response.write(s._chunk({}, "tool_calls") + b"data: [DONE]\n\n")
            return
        await s.text("It is 42.")
        await s.finish()
    upstream.stream_script = script


@pytest.mark.parametrize("stream", [False, True])
async def test_required_forces_one_round_then_the_model_answers(upstream, stream):
    calls_when_forced(upstream)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        if stream:
            async with client.chat.completions.stream(model=MODEL, messages=ASK, tool_choice="required") as s:
                reply = await s.get_final_completion()
        else:
            reply = await client.chat.completions.create(model=MODEL, messages=ASK, tool_choice="required")
    assert reply.choices[0].message.content == "It is 42."
    assert [r.get("tool_choice") for r in upstream.requests] == ["required", "auto"]  # two calls, one forced
    assert "calculate" in tool_names(upstream.requests[0])
    assert upstream.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}


async def test_running_out_of_rounds_is_logged_with_the_rounds_and_the_tools(upstream, caplog):
    calls_when_forced(upstream, always=True)
    config = gateway_config(model=upstream.model_config(max_turns=3))
    with caplog.at_level(logging.WARNING):
        async with running_gateway(config) as gw:
            status, headers, raw = await post_raw(f"{gw.url}/v1/chat/completions",
                                                  {"model": MODEL, "messages": ASK})
            error = json.loads(raw)["error"]
            assert len(upstream.requests) == 3
            # the SDK with its default retries asks once: the 502 says retrying would loop the same way
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x")
            with pytest.raises(openai.InternalServerError) as caught:
                await client.chat.completions.create(model=MODEL, messages=ASK)
    assert status == 502 and error["code"] == "max_rounds_exceeded" and "log lists the tools" in error["message"]
    assert headers.get("x-should-retry") == "false" and "Please retry" not in error["message"]
    assert caught.value.status_code == 502 and len(upstream.requests) == 6  # 3 + 3: the SDK did not retry
    logged = [r.getMessage() for r in caplog.records if "model.max_turns" in r.getMessage()]
    assert any("after 3 model calls" in line and "calculate x2" in line for line in logged), logged


async def test_auto_offers_the_gateways_tools_only_when_the_client_brings_none(upstream):
    upstream.reply = lambda body: "ok"
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        await client.chat.completions.create(model=MODEL, messages=ASK)
        await client.chat.completions.create(model=MODEL, messages=ASK, tools=[CLIENT_CALC])  # its own calculate
        await client.responses.create(model=MODEL, input="hi", tools=[{"type": "function", "name": "lookup"}])
    gateway, clients, responses = (tool_names(r) for r in upstream.requests)
    assert "calculate" in gateway
    assert clients == ["calculate"] and responses == ["lookup"]


async def test_never_offers_them_so_required_has_nothing_to_require(upstream):
    calls_when_forced(upstream)
    async with running_gateway(gateway_config(model=upstream.model_config(),
                                              api={"gateway_tools": "never"})) as gw:
        status, _, _ = await post_raw(f"{gw.url}/v1/chat/completions",
                                      {"model": MODEL, "messages": ASK, "tool_choice": "required"})
    assert status == 400  # nothing to require: no tool is offered
    assert upstream.requests == []


async def test_always_renames_a_clashing_gateway_tool_and_returns_the_clients_call(upstream):
    """One answer calls both kinds: the gateway runs its own (seen as tool progress), the client gets its call."""
    async def both(body: dict, s) -> None:
        await s.role()
        await s.response.write(s._chunk({"tool_calls": [
            {"index": 0, "id": "call_gw", "type": "function",
             "function": {"name": "gateway_calculate", "arguments": '{"expression": "6 * 7"}'}},
            {"index": 1, "id": "call_client", "type": "function",
             "function": {"name": "calculate", "arguments": '{"x": "1"}'}}]}))
        await s.response.write(s._chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    upstream.stream_script = both
    config = gateway_config(model=upstream.model_config(), api={"gateway_tools": "always"})
    async with running_gateway(config) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions",
                                        {"model": MODEL, "messages": ASK, "tools": [CLIENT_CALC], "stream": True,
                                         "hermes_tool_progress": True})
    assert status == 200
    offered = tool_names(upstream.requests[0])
    assert offered[0] == "calculate" and "gateway_calculate" in offered and offered.count("calculate") == 1
    items = parse_sse(raw)
    progress = [json.loads(c.split(" ", 2)[2]) for c in items if isinstance(c, str) and "tool_progress" in c]
    assert progress[-1]["name"] == "gateway_calculate" and progress[-1]["ok"] and progress[-1]["summary"] == "42"
    chunks = [e.json() for e in items if not isinstance(e, str) and e.data != "[DONE]"]
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or ()]
    assert [c["function"].get("name") for c in calls if c.get("id")] == ["calculate"]
    assert [c["id"] for c in calls if c.get("id")] == ["call_client"] and {c["index"] for c in calls} == {0}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert len(upstream.requests) == 1


async def test_a_bad_gateway_tools_setting_is_one_line_naming_the_key():
    from hermes_gateway._core.config import ConfigError, parse_config
    with pytest.raises(ConfigError) as info:
        parse_config({"api_server": {"gateway_tools": "sometimes"}}, env={})
    assert str(info.value).count("\n") == 0 and "api_server.gateway_tools" in str(info.value)
    assert "auto, always, never" in str(info.value)


async def test_both_kinds_in_one_answer_continue_by_previous_response_id(upstream):
    """The stored conversation holds both calls and the gateway's result; the client's result follows them."""
    async def both_then_text(body: dict, s) -> None:
        await s.role()
        if body["messages"][-1]["role"] == "tool":
            await s.text("done")
            await s.finish()
            return
        await s.response.write(s._chunk({"tool_calls": [
            {"index": 0, "id": "call_gw", "type": "function",
             "function": {"name": "gateway_calculate", "arguments": '{"expression": "6 * 7"}'}},
            {"index": 1, "id": "call_client", "type": "function",
             "function": {"name": "calculate", "arguments": '{"x": "1"}'}}]}))
        await s.response.write(s._chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    upstream.stream_script = both_then_text
    flat = {"type": "function", **CLIENT_CALC["function"]}
    config = gateway_config(model=upstream.model_config(), api={"gateway_tools": "always"})
    async with running_gateway(config) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        first = await client.responses.create(model=MODEL, input="what is 6 * 7?", tools=[flat])
        (call,) = [item for item in first.output if item.type == "function_call"]
        assert call.name == "calculate" and call.call_id == "call_client"
        second = await client.responses.create(model=MODEL, previous_response_id=first.id, tools=[flat], input=[
            {"type": "function_call_output", "call_id": "call_client", "output": "one"}])
    assert second.output_text == "done"
    sent = upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent[-4:]] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in sent[-2:]] == ["call_gw", "call_client"] and sent[-2]["content"] == "42"
