"""``model.transport: fast`` and ``sdk`` yield the same events for the same upstream bytes.

Each case is a list of upstream answers: streams recorded from the demo
model (:mod:`recorded_streams`, replayed byte for byte), cut short, broken
off, preceded by retryable errors, or replaced by HTTP errors and JSON
answers. The scripted upstream on 127.0.0.1 serves them once to an agent on
the fast transport and once to an agent on the sdk transport (the openai
SDK's public ``create``), and every event the agent yields — text deltas,
tool calls, usage, resets, the turn's end with its reply, history and
error text — must be equal, as must the requests the upstream saw (path,
JSON body, retry count). Each case also checks what it is about on its own,
so an agreement on nothing (say, two empty turns) fails.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
from hermes_gateway._core.events import StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd, UsageReport

from recorded_streams import CALCULATE, ECHO, load
from scripted_upstream import ScriptedUpstream, chunk, completion, model_config

RECORDED = load()
ECHOED = "recorded streams say hello"
TOOL_REPLY = "The tool calculate returned: 42"


def recorded(name: str) -> list[tuple]:
    return [("raw", RECORDED[name])]


def broken_off(name: str, events: int) -> list[tuple]:
    """The first ``events`` SSE events of a recording, then the connection drops (after the client read them)."""
    head = b"".join(event + b"\n\n" for event in RECORDED[name].split(b"\n\n")[:events])
    return [("raw", head), ("sleep", 0.2), ("drop",)]


def responses_json(text: str | None = None, *, call: tuple[str, str, str] | None = None) -> dict[str, Any]:
    """A complete (non-streamed) Responses answer: a text message or a function call."""
    output: list[dict[str, Any]] = []
    if text is not None:
        output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    if call is not None:
        output.append({"type": "function_call", "id": "fc_1", "status": "completed", "call_id": call[0],
                       "name": call[1], "arguments": call[2]})
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}


def chat_call(call_id: str = "call_7") -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": "calculate", "arguments": '{"expression": "6 * 7"}'}}


def status(code: int, message: str, **headers: str) -> tuple:
    return ("status", code, {"error": {"message": message, "type": "test"}}, headers)


@dataclass
class Case:
    api_mode: str
    answers: list[list[tuple]]
    check: Callable[[list[Any], list[tuple]], None]
    message: str = ECHO
    stream: bool = True
    tools: bool = False
    options: dict[str, Any] = field(default_factory=dict)


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


def end(events: list[Any]) -> TurnEnd:
    assert isinstance(events[-1], TurnEnd)
    return events[-1]


def texts(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


def replied(reply: str, *, usage: UsageReport | None = None, reset: bool = False) -> Callable[[list, list], None]:
    def check(events: list[Any], _: list[tuple]) -> None:
        assert end(events).reply == reply and end(events).error is None
        assert (StreamReset in map(type, events)) is reset
        if usage is not None:
            assert end(events).usage == usage
    return check


def retried_then(reply: str, counts: list[str]) -> Callable[[list, list], None]:
    def check(events: list[Any], seen: list[tuple]) -> None:
        replied(reply)(events, seen)
        assert [count for _, _, count in seen] == counts
    return check


def failed(*parts: str) -> Callable[[list, list], None]:
    def check(events: list[Any], _: list[tuple]) -> None:
        error = end(events).error
        assert error is not None and all(part in error for part in parts), error
    return check


def tool_turn(events: list[Any], seen: list[tuple]) -> None:
    assert end(events).reply == TOOL_REPLY and end(events).error is None
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert started.name == finished.name == "calculate" and finished.summary == "42"
    assert len(seen) == 2


CASES: dict[str, Case] = {
    "chat: text deltas and usage": Case(
        "chat_completions", [recorded("chat_text")], replied(ECHOED, usage=UsageReport(8, 4, 12))),
    "chat: a tool call, its result sent back, then text": Case(
        "chat_completions", [recorded("chat_tool_call"), recorded("chat_after_tool")], tool_turn,
        message=CALCULATE, tools=True),
    "chat: 503 and 429 with retry-after are retried, then the stream": Case(
        "chat_completions", [[status(503, "busy", **{"retry-after-ms": "5"})],
                             [status(429, "slow down", **{"retry-after": "0.01"})], recorded("chat_text")],
        retried_then(ECHOED, ["0", "1", "2"])),
    "chat: the stream breaks mid-way, a non-streamed call replaces it": Case(
        "chat_completions", [broken_off("chat_text", 3), [("json", completion(ECHOED, usage=(8, 4)))]],
        replied(ECHOED, reset=True)),
    "chat: an error inside the stream, then a 5xx the server says not to retry": Case(
        "chat_completions", [[("data", chunk("Half", role="assistant")),
                              ("data", {"error": {"message": "model overloaded", "type": "server_error"}})],
                             [status(500, "still overloaded", **{"x-should-retry": "false"})]],
        failed("(stream): upstream error: model overloaded", "(non-streaming call): HTTP 500: still overloaded")),
    "chat: a 5xx on every retry takes the endpoint down": Case(
        "chat_completions", [[status(502, "bad gateway", **{"retry-after-ms": "1"})]] * 3,
        failed("(stream): HTTP 502: bad gateway")),
    "chat: a 400 is not retried, nor replayed without streaming (issue 34)": Case(
        "chat_completions", [[status(400, "bad temperature")]],
        failed("(stream): HTTP 400: bad temperature")),
    "chat: stream_options refused, streamed again without it": Case(
        "chat_completions", [[status(400, "Unrecognized request argument supplied: stream_options")],
                             recorded("chat_text")], replied(ECHOED)),
    "chat: JSON to a stream request (not streaming), then a non-streamed call": Case(
        "chat_completions", [[("json", completion("no stream here"))], [("json", completion(ECHOED, usage=(8, 4)))]],
        replied(ECHOED, usage=UsageReport(8, 4, 12))),
    "chat: a non-streamed turn with a tool call": Case(
        "chat_completions", [[("json", completion(None, tool_calls=[chat_call()]))],
                             [("json", completion(TOOL_REPLY, usage=(16, 5)))]],
        tool_turn, message=CALCULATE, stream=False, tools=True),
    "responses: text deltas and usage": Case(
        "responses", [recorded("responses_text")], replied(ECHOED, usage=UsageReport(8, 4, 12))),
    "responses: a function call, its output sent back, then text": Case(
        "responses", [recorded("responses_tool_call"), recorded("responses_after_tool")], tool_turn,
        message=CALCULATE, tools=True),
    "responses: 429 and 500 with retry-after are retried, then the stream": Case(
        "responses", [[status(429, "slow down", **{"retry-after-ms": "5"})],
                      [status(500, "oops", **{"retry-after-ms": "5"})], recorded("responses_text")],
        retried_then(ECHOED, ["0", "1", "2"])),
    "responses: the stream breaks mid-way, a non-streamed call replaces it": Case(
        "responses", [broken_off("responses_text", 6), [("json", responses_json(ECHOED))]],
        replied(ECHOED, reset=True, usage=UsageReport(3, 2, 5))),
    "responses: response.failed, then a 400": Case(
        "responses", [[("event", "response.failed", {"type": "response.failed", "sequence_number": 0,
                                                       "response": {"error": {"message": "quota"}}})],
                      [status(400, "no")]],
        failed("(stream): UpstreamError: quota", "(non-streaming call): HTTP 400: no")),
    "responses: a non-streamed turn with a function call": Case(
        "responses", [[("json", responses_json(call=("call_7", "calculate", '{"expression": "6 * 7"}')))],
                      [("json", responses_json(TOOL_REPLY))]],
        tool_turn, message=CALCULATE, stream=False, tools=True),
}


def calculate(expression: str) -> str:
    assert expression == "6 * 7"
    return "42"


async def run(fake: ScriptedUpstream, transport: str, case: Case) -> tuple[list[Any], list[tuple]]:
    """The agent's events for ``case`` on ``transport``, and what the upstream saw: (path, body, retry count)."""
    STREAM_SUPPORT.forget()
    fake.requests.clear()
    for answer in case.answers:
        fake.add(*answer)
    tools = [Tool("calculate", "Evaluates arithmetic", calculate, {"type": "object"})] if case.tools else []
    config = model_config(fake.url, api_mode=case.api_mode, transport=transport, api_key="sk-parity",
                          timeouts={"first_token": 10, "stall": 10, "connect": 5}, **case.options)
    agent = AIAgent.from_config(config, tools=tools)
    assert agent._pool.all()[0].transport.kind == transport
    try:
        # The turn as astream() runs it, streamed or not (arun_conversation without a callback: not streamed).
        turn = agent._run_turn(agent._new_turn(), case.message, None, stream=case.stream)
        events = [event async for event in turn]
    finally:
        await agent.aclose()
    assert not fake.scripts, "every recorded answer was asked for"
    lower = [{k.lower(): v for k, v in r.headers.items()} for r in fake.requests]
    seen = [(r.path, r.body, h.get("x-stainless-retry-count")) for r, h in zip(fake.requests, lower)]
    return events, seen


@pytest.mark.parametrize("name", list(CASES))
async def test_both_transports_yield_the_same_events(fake: ScriptedUpstream, name: str) -> None:
    case = CASES[name]
    fast_events, fast_seen = await run(fake, "fast", case)
    sdk_events, sdk_seen = await run(fake, "sdk", case)
    case.check(fast_events, fast_seen)
    assert kinds(fast_events) == kinds(sdk_events)
    assert texts(fast_events) == texts(sdk_events)
    assert fast_events == sdk_events
    assert [(path, json.dumps(body, sort_keys=True), count) for path, body, count in fast_seen] == \
        [(path, json.dumps(body, sort_keys=True), count) for path, body, count in sdk_seen]


@pytest.mark.parametrize("api_mode", ["chat_completions", "responses"])
async def test_an_interrupt_closes_the_upstream_connection_on_both(fake: ScriptedUpstream, api_mode: str) -> None:
    """Stopping a turn mid-stream hangs up on the upstream (which stops the model) whichever transport streams."""
    endless = ("forever", 0.02) if api_mode == "chat_completions" else ("forever_events", 0.02, 0)
    ends = {}
    for transport in ("fast", "sdk"):
        STREAM_SUPPORT.forget()
        fake.disconnected.clear()
        fake.add(endless)
        agent = AIAgent.from_config(model_config(fake.url, api_mode=api_mode, transport=transport), tools=[])
        shown = []
        async for event in agent.astream("go on forever"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
                if len(shown) == 3:
                    agent.interrupt()
            elif isinstance(event, TurnEnd):
                ends[transport] = event
        await asyncio.wait_for(fake.disconnected.wait(), 5)  # the upstream saw the client go
        await agent.aclose()
        assert shown == ["tick0 ", "tick1 ", "tick2 "]
    assert ends["fast"] == ends["sdk"] and ends["fast"].interrupted and ends["fast"].reply == "tick0 tick1 tick2"
