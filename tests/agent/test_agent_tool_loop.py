"""The tool loop: bad tool calls become readable results, limits hold, interrupts reach tools."""

from __future__ import annotations

import asyncio
import json

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.results import ToolCall
from hermes_gateway._core.agent.tool_runner import MAX_RESULT_CHARS, run_tool
from hermes_gateway._core.events import ToolCallFinished, ToolCallStarted, TurnEnd

from scripted_upstream import ScriptedUpstream, chunk, model_config, text_stream

SCHEMA = {"type": "object", "properties": {}}


async def turn(agent: AIAgent, message: str) -> list:
    return [e async for e in agent.astream(message)]


def finished(events: list) -> ToolCallFinished:
    return next(e for e in events if isinstance(e, ToolCallFinished))


async def test_a_tool_that_raises_becomes_a_result_the_model_reads() -> None:
    def broken(**_: object) -> str:
        raise ValueError("the disk is on fire")

    agent = AIAgent.from_config(model_config(), tools=[Tool("broken", "fails", broken, SCHEMA)])
    events = await turn(agent, "tool: broken {}")
    done = finished(events)
    assert not done.ok and done.summary == "Error: broken failed: ValueError: the disk is on fire"
    assert events[-1].reply == "The tool broken returned: Error: broken failed: ValueError: the disk is on fire"
    assert events[-1].error is None


async def test_unknown_tool_and_bad_arguments_are_reported_to_the_model() -> None:
    agent = AIAgent.from_config(model_config())  # built-in tools
    events = await turn(agent, "tool: teleport {}")
    assert finished(events).summary == ("Error: unknown tool 'teleport'. Available tools: calculate, "
                                        "current_time, qr_code.")
    events = await turn(agent, "tool: calculate {\"expression\": ")
    assert finished(events).summary.startswith("Error: the arguments for calculate are not valid JSON")
    events = await turn(agent, "tool: calculate [1, 2]")
    assert finished(events).summary == "Error: the arguments for calculate must be a JSON object, got list."
    events = await turn(agent, 'tool: calculate {"expression": "__import__(\'os\')"}')
    assert finished(events).summary.startswith("Error: calculate failed: CalculationError: unsupported element")
    assert all(e.error is None for e in events if isinstance(e, TurnEnd))


async def test_arguments_json_cannot_read_are_reported_not_raised() -> None:
    """An integer of 5000 digits is well-formed JSON that ``json.loads`` refuses with a plain ValueError."""
    tools = {"calculate": Tool("calculate", "adds", lambda **_: "0", SCHEMA)}
    outcome = await run_tool(tools, ToolCall("1", "calculate", '{"n": ' + "9" * 5000 + "}"))
    assert not outcome.ok
    assert outcome.result.startswith("Error: the arguments for calculate are not valid JSON (Exceeds the limit")


async def test_current_time_tool_through_the_loop() -> None:
    agent = AIAgent.from_config(model_config())
    events = await turn(agent, 'tool: current_time {"timezone_name": "UTC"}')
    assert finished(events).ok and finished(events).summary.endswith("+00:00")


async def test_max_turns_stops_a_model_that_keeps_calling_tools(fake: ScriptedUpstream) -> None:
    call = [("data", chunk(role="assistant", tool_calls=[{"index": 0, "id": "c", "type": "function",
                                                          "function": {"name": "again", "arguments": "{}"}}])),
            ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n")]
    fake.default = call
    agent = AIAgent.from_config(model_config(fake.url, max_turns=3),
                                tools=[Tool("again", "loops", lambda: "more", SCHEMA)])
    events = await turn(agent, "loop forever")
    end = events[-1]
    assert len(fake.requests) == 3 and sum(isinstance(e, ToolCallFinished) for e in events) == 2
    assert end.error.startswith("stopped after 3 model calls (model.max_turns)")
    roles = [m["role"] for m in end.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    assert end.messages[-1]["content"] == "Error: not run: the turn reached model.max_turns."


async def test_parallel_tool_calls_run_concurrently_and_report_in_order(fake: ScriptedUpstream) -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    async def meet(name: str) -> str:
        started.append(name)
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 5)  # deadlocks if tools ran one after the other
        return f"{name} done"

    tools = [Tool(n, n, (lambda n=n: meet(n)), SCHEMA) for n in ("first", "second")]
    fake.add(("data", chunk(role="assistant", tool_calls=[
                 {"index": 0, "id": "a", "type": "function", "function": {"name": "first", "arguments": "{}"}},
                 {"index": 1, "id": "b", "type": "function", "function": {"name": "second", "arguments": "{}"}}])),
             ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n"))
    fake.add(*text_stream("both ran"))
    events = await turn(AIAgent.from_config(model_config(fake.url), tools=tools), "go")
    assert [e.summary for e in events if isinstance(e, ToolCallFinished)] == ["first done", "second done"]
    assert events[-1].reply == "both ran"


async def test_interrupt_while_a_tool_runs_ends_the_turn_and_cancels_the_tool() -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow() -> str:
        entered.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    agent = AIAgent.from_config(model_config(), tools=[Tool("slow", "slow", slow, SCHEMA)])
    events: list = []

    async def consume() -> None:
        async for event in agent.astream("tool: slow {}"):
            events.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(entered.wait(), 5)
    agent.interrupt()
    await asyncio.wait_for(task, 2)
    await asyncio.wait_for(cancelled.wait(), 1)
    end = events[-1]
    assert end.interrupted and end.error is None
    assert any(isinstance(e, ToolCallStarted) for e in events)
    assert end.messages[-1] == {"role": "tool", "tool_call_id": end.messages[-2]["tool_calls"][0]["id"],
                                "content": "Error: interrupted before the tool finished."}


async def test_interrupt_from_another_thread() -> None:
    import threading

    # slow enough to interrupt part-way
    agent = AIAgent.from_config(model_config(demo={"tokens_per_second": 20}), tools=[])
    events = []
    async for event in agent.astream("hello"):
        events.append(event)
        if len(events) == 3:
            threading.Thread(target=agent.interrupt).start()
    assert events[-1].interrupted and 3 <= len(events) < 20
    await agent.aclose()


async def test_tool_results_are_text_and_huge_results_are_truncated() -> None:
    tools = {"obj": Tool("obj", "", lambda: {"a": [1, 2]}, SCHEMA),
             "big": Tool("big", "", lambda: "x" * (MAX_RESULT_CHARS + 10), SCHEMA)}
    assert (await run_tool(tools, ToolCall("1", "obj", ""))).result == json.dumps({"a": [1, 2]})
    big = await run_tool(tools, ToolCall("2", "big", "{}"))
    assert big.result.endswith("[truncated: 10 more characters]") and big.ok
    assert len(big.summary) == 200


async def test_a_result_that_cannot_become_text_is_a_tool_error() -> None:
    class Weird:
        def __str__(self) -> str:
            raise RuntimeError("unprintable")

    agent = AIAgent.from_config(model_config(), tools=[Tool("weird", "", lambda: Weird(), SCHEMA)])
    end = (await turn(agent, "tool: weird {}"))[-1]
    assert end.reply == "The tool weird returned: Error: weird failed: RuntimeError: unprintable"


async def test_a_bug_inside_the_agent_still_ends_the_turn_with_a_readable_error(monkeypatch) -> None:
    import hermes_gateway._core.agent.core as core

    async def crash(tools, call, timeout=None, media_directory=None):  # stands in for a bug: nothing real can make run_tool itself fail
        raise KeyError("bug")

    monkeypatch.setattr(core, "run_tool", crash)
    agent = AIAgent.from_config(model_config(), tools=[Tool("t", "", lambda: 1, SCHEMA)])
    events = await turn(agent, "tool: t {}")
    assert [type(e) for e in events].count(TurnEnd) == 1
    assert events[-1].error == "internal error: KeyError: 'bug'"


async def test_a_tool_that_takes_too_long_is_abandoned_with_a_readable_result() -> None:
    async def hang() -> str:
        await asyncio.sleep(30)
        return "never"

    agent = AIAgent.from_config(model_config(), tools=[Tool("hang", "", hang, SCHEMA)], tool_timeout=0.1)
    end = (await asyncio.wait_for(turn(agent, "tool: hang {}"), 5))[-1]
    assert end.reply == "The tool hang returned: Error: hang did not finish within 0.1 seconds."
