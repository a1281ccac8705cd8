"""The agent asks its approver before a tool runs (``tools.approval``): a no means the tool never runs."""

from __future__ import annotations

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.results import ToolCall
from hermes_gateway._core.agent.tool_runner import DENIED, refusal
from hermes_gateway._core.events import TurnEnd

from scripted_upstream import model_config

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}}


async def run(message: str, approver) -> tuple[list[str], TurnEnd, list[tuple[str, str]]]:
    runs: list[str] = []
    asked: list[tuple[str, str]] = []

    def shell(x: str = "") -> str:
        runs.append(x)
        return f"ran {x}"

    async def ask(name: str, arguments: str) -> bool:
        asked.append((name, arguments))
        return await approver(name, arguments)

    agent = AIAgent.from_config(model_config(), tools=[Tool("shell", "", shell, SCHEMA)])
    async with agent:
        events = [e async for e in agent.astream(message, approver=ask)]
    assert isinstance(events[-1], TurnEnd)
    return runs, events[-1], asked


async def test_a_yes_runs_the_tool_and_a_no_never_does():
    async def yes(name, arguments):
        return True

    async def no(name, arguments):
        return False

    runs, end, asked = await run('tool: shell {"x": "ls"}', yes)
    assert runs == ["ls"] and asked == [("shell", '{"x": "ls"}')] and "ran ls" in end.reply
    runs, end, _ = await run('tool: shell {"x": "rm"}', no)
    assert runs == [] and end.messages[2] == {"role": "tool", "tool_call_id": end.messages[1]["tool_calls"][0]["id"],
                                              "content": DENIED}
    assert "denied by the user" in end.reply


async def test_an_approver_that_fails_is_a_no_and_an_unknown_tool_is_not_asked_about():
    async def broken(name, arguments):
        raise RuntimeError("the chat is gone")

    runs, end, _ = await run('tool: shell {"x": "rm"}', broken)
    assert runs == [] and "denied by the user" in end.reply and end.error is None
    unknown = ToolCall(call_id="c1", name="nope", arguments="{}")
    assert await refusal({}, unknown, broken) is None  # run_tool reports it as unknown; nobody is asked
