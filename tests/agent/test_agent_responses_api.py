"""Responses API mode (``model.api_mode: responses``): text deltas and function calls as events."""

from __future__ import annotations

import asyncio
import json

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.responses_api import to_responses_input
from hermes_gateway._core.events import StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, UsageReport

from scripted_upstream import ScriptedUpstream, model_config

FAST = {"timeouts": {"first_token": 1, "stall": 0.5}}


def responses_agent(url: str | None, tools=None) -> AIAgent:
    return AIAgent.from_config(model_config(url, api_mode="responses", **FAST), tools=tools)


def response(status: str, output=(), usage=None) -> dict:
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": status,
            "output": list(output), "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": usage}


def scripted_events(*events: tuple[str, dict]) -> list[tuple]:
    """("event", type, data) steps with dense sequence numbers."""
    return [("event", kind, {"type": kind, "sequence_number": n, **data}) for n, (kind, data) in enumerate(events)]


async def test_text_and_function_call_stream_from_the_demo_server(demo_url: str) -> None:
    agent = responses_agent(demo_url)
    events = [e async for e in agent.astream("echo: streamed via responses")]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["streamed", " via", " responses"]
    assert events[-1].reply == "streamed via responses" and events[-1].error is None
    events = [e async for e in agent.astream('tool: calculate {"expression": "(1 + 2) * 14"}')]
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert started.name == finished.name == "calculate" and finished.summary == "42"
    assert events[-1].reply == "The tool calculate returned: 42"
    assert not events[-1].usage.estimated
    await agent.aclose()


async def test_demo_mode_in_responses_mode_works_in_process() -> None:
    agent = responses_agent(None, tools=[])
    assert (await agent.arun_conversation("echo: no port needed")).reply == "no port needed"


async def test_scripted_function_call_is_reassembled_and_results_go_back_as_input_items(
        fake: ScriptedUpstream) -> None:
    args = json.dumps({"expression": "7 * 6 + 0 * (1 + 2 + 3 + 4 + 5)"})
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_9",
            "name": "calculate", "arguments": ""}
    fake.add(*scripted_events(
        ("response.created", {"response": response("in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": item}),
        *[("response.function_call_arguments.delta", {"item_id": "fc_1", "output_index": 0, "delta": args[i:i + 5]})
          for i in range(0, len(args), 5)],
        ("response.function_call_arguments.done", {"item_id": "fc_1", "output_index": 0, "arguments": args,
                                                   "name": "calculate"}),
        ("response.output_item.done", {"output_index": 0, "item": {**item, "status": "completed", "arguments": args}}),
        ("response.completed", {"response": response("completed", usage={"input_tokens": 9, "output_tokens": 5,
                                                                          "total_tokens": 14})}),
    ))
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    fake.add(*scripted_events(
        ("response.created", {"response": response("in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": msg}),
        ("response.output_text.delta", {"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "It is "}),
        ("response.output_text.delta", {"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "42."}),
        ("response.completed", {"response": response("completed")}),
    ))
    agent = responses_agent(fake.url)  # built-in tools
    events = [e async for e in agent.astream("what is 7*6?")]
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.arguments == args and finished.summary == "42" and finished.call_id == "call_9"
    assert events[-1].reply == "It is 42."
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert usage[0] == UsageReport(9, 5, 14) and usage[1].estimated  # the second answer had no usage
    first, second = fake.requests[0], fake.requests[1]
    assert first.path == "/v1/responses" and first.body["stream"] is True
    assert {t["name"] for t in first.body["tools"]} == {"calculate", "current_time", "qr_code"}
    assert second.body["input"][-2:] == [
        {"type": "function_call", "call_id": "call_9", "name": "calculate", "arguments": args},
        {"type": "function_call_output", "call_id": "call_9", "output": "42"}]


async def test_response_failed_mid_stream_falls_back_to_a_non_streaming_call(fake: ScriptedUpstream) -> None:
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    fake.add(*scripted_events(
        ("response.created", {"response": response("in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": msg}),
        ("response.output_text.delta", {"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Half"}),
        ("response.failed", {"response": {**response("failed"), "error": {"code": "server_error",
                                                                          "message": "model crashed"}}}),
    ))
    done = {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Whole answer.", "annotations": []}]}
    fake.add(("json", response("completed", output=[done], usage={"input_tokens": 3, "output_tokens": 2,
                                                                  "total_tokens": 5})))
    events = [e async for e in responses_agent(fake.url, tools=[]).astream("hi")]
    reset = next(i for i, e in enumerate(events) if isinstance(e, StreamReset))
    assert [e.text for e in events[reset:] if isinstance(e, TextDelta)] == ["Whole answer."]
    assert events[-1].reply == "Whole answer." and events[-1].usage == UsageReport(3, 2, 5)
    assert "stream" not in fake.requests[1].body


async def test_stream_ending_before_response_completed_is_incomplete(fake: ScriptedUpstream) -> None:
    fake.add(*scripted_events(("response.created", {"response": response("in_progress")})))
    fake.add(("status", 503, {"error": {"message": "down", "type": "server_error"}}, {"x-should-retry": "false"}))
    end = [e async for e in responses_agent(fake.url, tools=[]).astream("hi")][-1]
    assert "response.completed" in end.error and "HTTP 503: down" in end.error


def test_chat_messages_become_responses_input_items() -> None:
    messages = [{"role": "system", "content": "be kind"},
                {"role": "user", "content": "add"},
                {"role": "assistant", "content": "checking",
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "3"}]
    instructions, items = to_responses_input(messages)
    assert instructions == "be kind"
    assert items == [{"role": "user", "content": "add"}, {"role": "assistant", "content": "checking"},
                     {"type": "function_call", "call_id": "c1", "name": "calc", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": "c1", "output": "3"}]


async def test_interrupt_mid_stream_closes_the_connection_in_responses_mode(fake: ScriptedUpstream) -> None:
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    fake.add(*scripted_events(("response.created", {"response": response("in_progress")}),
                              ("response.output_item.added", {"output_index": 0, "item": msg})),
             ("forever_events", 0.02, 2))
    agent = responses_agent(fake.url, tools=[])
    events = []
    async for event in agent.astream("go"):
        events.append(event)
        if len(events) == 3:
            agent.interrupt()
    assert events[-1].interrupted and events[-1].raw == "tick0 tick1 tick2 "
    await asyncio.wait_for(fake.disconnected.wait(), 1.0)
    await agent.aclose()
