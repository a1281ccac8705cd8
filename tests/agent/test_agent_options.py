"""An API client's TurnOptions: in every upstream request of the turn, in either API mode; client tool calls end it."""

from __future__ import annotations

import json

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.options import TurnOptions, chat_body, responses_body
from hermes_gateway._core.agent.responses_api import to_responses_input
from hermes_gateway._core.events import TurnEnd

from scripted_upstream import ScriptedUpstream, chunk, model_config, text_stream

CLIENT = {"type": "function", "function": {"name": "lookup", "description": "d", "parameters": {"type": "object"},
                                           "strict": True}}
GATEWAY = {"type": "function", "function": {"name": "calculate", "parameters": {"type": "object"}}}
FMT = {"type": "json_schema", "json_schema": {"name": "f", "schema": {"type": "object"}, "strict": True}}
OPTIONS = TurnOptions({"temperature": 0.3, "max_completion_tokens": 9, "response_format": FMT, "stop": ["x"],
                       "metadata": {"a": "b"}, "reasoning_effort": "low"}, (CLIENT,),
                      {"type": "function", "function": {"name": "lookup"}}, False)


def test_chat_body_puts_the_clients_tools_first_and_the_parameters_as_sent():
    body = chat_body(OPTIONS, [GATEWAY])
    assert body["tools"] == [CLIENT, GATEWAY]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert body["parallel_tool_calls"] is False
    assert {k: body[k] for k in ("temperature", "max_completion_tokens", "response_format", "stop", "metadata")} == {
        "temperature": 0.3, "max_completion_tokens": 9, "response_format": FMT, "stop": ["x"], "metadata": {"a": "b"}}


def test_responses_body_translates_names_and_shapes():
    body = responses_body(OPTIONS, [{"type": "function", "name": "calculate", "parameters": {"type": "object"}}])
    assert body["tools"][0] == {"type": "function", "name": "lookup", "description": "d",
                                "parameters": {"type": "object"}, "strict": True}
    assert body["tool_choice"] == {"type": "function", "name": "lookup"}
    assert body["max_output_tokens"] == 9 and body["temperature"] == 0.3
    assert body["text"] == {"format": {"type": "json_schema", "name": "f", "schema": {"type": "object"},
                                       "strict": True}}
    assert body["reasoning"] == {"effort": "low"}
    assert "stop" not in body and "max_completion_tokens" not in body  # no Responses equivalent / renamed


def test_images_in_responses_mode_become_input_image_parts():
    _, items = to_responses_input([{"role": "user", "content": [
        {"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "https://x/a.png"}}]}])
    assert items == [{"role": "user", "content": [{"type": "input_text", "text": "hi"},
                                                  {"type": "input_image", "image_url": "https://x/a.png",
                                                   "detail": "auto"}]}]


async def test_every_model_call_of_a_turn_carries_the_options_and_a_client_call_ends_it():
    ran = []
    calculate = Tool("calculate", "math", lambda expression="": ran.append(expression) or "42",
                     {"type": "object", "properties": {"expression": {"type": "string"}}})
    async with ScriptedUpstream() as upstream:
        upstream.add(("data", chunk(role="assistant", tool_calls=[
            {"index": 0, "id": "g1", "type": "function", "function": {"name": "calculate",
                                                                       "arguments": '{"expression": "1"}'}}])),
            ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n"))
        upstream.add(("data", chunk("Looking", role="assistant")), ("data", chunk(tool_calls=[
            {"index": 0, "id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 1}'}}])),
            ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n"))
        agent = AIAgent.from_config(model_config(upstream.url), tools=[calculate])
        events = [e async for e in agent.astream("go", options=TurnOptions({"seed": 3}, (CLIENT,)))]
        await agent.aclose()
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.error is None
    assert ran == ["1"]  # the gateway's tool ran server-side, in the same turn
    assert end.finish_reason == "tool_calls"
    assert end.tool_calls == ({"id": "c1", "type": "function", "function": {"name": "lookup",
                                                                            "arguments": '{"q": 1}'}},)
    assert [r.body["seed"] for r in upstream.requests] == [3, 3]
    assert [t["function"]["name"] for t in upstream.requests[0].body["tools"]] == ["lookup", "calculate"]
    assert end.messages[-1] == {"role": "assistant", "content": "Looking", "tool_calls": list(end.tool_calls)}


async def test_a_cut_answer_ends_with_length_and_runs_nothing():
    async with ScriptedUpstream() as upstream:
        upstream.add(("data", chunk("partial", role="assistant")), ("data", chunk(tool_calls=[
            {"index": 0, "id": "g1", "type": "function", "function": {"name": "calculate", "arguments": '{"ex'}}])),
            ("data", chunk(finish="length")), ("raw", b"data: [DONE]\n\n"))
        agent = AIAgent.from_config(model_config(upstream.url), tools=[])
        end = [e async for e in agent.astream("go", options=TurnOptions({"max_tokens": 2}))][-1]
        await agent.aclose()
    assert end.finish_reason == "length" and end.reply == "partial"
    assert len(upstream.requests) == 1 and upstream.requests[0].body["max_tokens"] == 2


async def test_a_turn_continues_from_the_clients_tool_results():
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("done"))
        agent = AIAgent.from_config(model_config(upstream.url), tools=[])
        history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"}]
        end = [e async for e in agent.astream(None, history=history, options=TurnOptions(client_tools=(CLIENT,)))][-1]
        await agent.aclose()
    assert end.reply == "done" and end.messages == [{"role": "assistant", "content": "done"}]
    assert [m["role"] for m in upstream.requests[0].body["messages"]] == ["user", "assistant", "tool"]


async def test_chats_send_exactly_what_they_always_did():
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("hi"))
        agent = AIAgent.from_config(model_config(upstream.url), tools=[])
        [e async for e in agent.astream("hello")]
        await agent.aclose()
    assert set(upstream.requests[0].body) == {"model", "messages", "stream", "stream_options"}
    assert json.dumps(upstream.requests[0].body["messages"]) == json.dumps([{"role": "user", "content": "hello"}])


def test_tool_choice_binds_the_first_round_only_and_needs_tools() -> None:
    """(issue 34) A forcing tool_choice becomes auto for later rounds; without tools it is not sent at all."""
    from hermes_gateway._core.agent.options import later_round
    forced = TurnOptions(tool_choice="required")
    assert later_round(forced).tool_choice == "auto"
    assert later_round(TurnOptions(tool_choice="none")).tool_choice == "none"
    assert later_round(OPTIONS) is OPTIONS or later_round(OPTIONS).tool_choice == "auto"
    assert "tool_choice" not in chat_body(forced, []) and "tool_choice" not in responses_body(forced, [])
    assert chat_body(forced, [GATEWAY])["tool_choice"] == "required"
    assert chat_body(TurnOptions(extra={"top_k": 4}, body={"temperature": 0.1}), [])["top_k"] == 4
