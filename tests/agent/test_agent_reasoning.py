"""``model.reasoning_starts_open`` in the agent: every model call of a turn starts inside reasoning.

A chat template that opens ``<think>`` in the prompt does so for every
generation, also the one after a tool result. The first call's text is
covered by the consumers' ``starts_open``; a later call's start is marked in
the streamed text itself, so previews, the terminal and the API stream hide
its reasoning too.
"""

from __future__ import annotations

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.events import TextDelta, TurnEnd
from hermes_gateway._core.reasoning import ReasoningFilter, postprocess_reply

from scripted_upstream import ScriptedUpstream, chunk, model_config, text_stream

SCHEMA = {"type": "object", "properties": {}}


def tool_call_with_reasoning(reasoning: str) -> list[tuple]:
    return [("data", chunk("", role="assistant")), ("data", chunk(reasoning)),
            ("data", chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                        "function": {"name": "lookup", "arguments": "{}"}}])),
            ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n")]


async def run(fake: ScriptedUpstream, starts_open: bool) -> tuple[list[str], TurnEnd]:
    fake.add(*tool_call_with_reasoning("I should look FIRST-SECRET up.\n</think>\n\n"))
    fake.add(*text_stream("The result says SECOND-SECRET", " so…\n</th", "ink>\n\nIt is ", "42."))
    config = model_config(fake.url, reasoning_starts_open=starts_open)
    agent = AIAgent.from_config(config, tools=[Tool("lookup", "looks up", lambda: "42", SCHEMA)])
    assert agent.reasoning_starts_open is starts_open
    events = [e async for e in agent.astream("what is it?")]
    return [e.text for e in events if isinstance(e, TextDelta)], events[-1]


async def test_with_the_flag_no_model_call_of_a_tool_turn_shows_its_reasoning(fake: ScriptedUpstream) -> None:
    deltas, end = await run(fake, starts_open=True)
    assert end.reply == "It is 42." == postprocess_reply(end.raw, starts_open=True)
    f = ReasoningFilter(starts_open=True)
    streamed = "".join(f.feed(d) for d in deltas) + f.finish()[1]
    assert streamed == "It is 42."
    assert [m.get("content") for m in end.messages if m["role"] == "assistant"] == [None, "It is 42."]
    # the second call's reasoning went back to the model as history only in its cleaned form
    assert "SECRET" not in str(fake.requests[1].body["messages"])


async def test_without_the_flag_the_text_is_passed_on_as_the_model_wrote_it(fake: ScriptedUpstream) -> None:
    deltas, end = await run(fake, starts_open=False)
    assert "<think>" not in end.raw
    assert end.raw == "".join(deltas)
    assert end.reply == postprocess_reply(end.raw)
