"""AIAgent end to end: the demo model in-process, over HTTP, and the seed's callback interface."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import pytest

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.events import TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd, UsageReport

from scripted_upstream import ScriptedUpstream, model_config, text_stream


async def collect(agent: AIAgent, message: str, history=None) -> list:
    return [event async for event in agent.astream(message, history=history)]


def texts(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_demo_mode_echo_streams_in_pieces_and_ends_with_one_turn_end() -> None:
    agent = AIAgent.from_config(model_config(), tools=[])
    events = await collect(agent, "echo: the quick brown fox")
    assert [type(e) for e in events].count(TurnEnd) == 1 and isinstance(events[-1], TurnEnd)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 4 and "".join(deltas) == "the quick brown fox"
    assert events[-1].reply == "the quick brown fox" and events[-1].error is None
    await agent.aclose()


async def test_demo_mode_default_answer_explains_how_to_configure() -> None:
    agent = AIAgent.from_config(model_config(), tools=[])
    end = (await collect(agent, "hello there"))[-1]
    assert "demo model" in end.reply
    for key in ("model.base_url", "model.name", "model.api_key"):
        assert key in end.reply
    assert 80 <= len(end.reply.split()) <= 150
    await agent.aclose()


async def test_think_block_is_in_raw_but_not_in_reply() -> None:
    agent = AIAgent.from_config(model_config(), tools=[])
    end = (await collect(agent, "think: forty-two"))[-1]
    assert end.reply == "forty-two"
    assert end.raw.startswith("<think>") and end.raw.endswith("forty-two")
    await agent.aclose()


async def test_against_demo_server_over_http_with_builtin_tool(demo_url: str) -> None:
    agent = AIAgent.from_config(model_config(demo_url))  # tools from the built-in plugin
    events = await collect(agent, 'tool: calculate {"expression": "6 * 7"}')
    kinds = [type(e) for e in events]
    assert kinds.index(ToolCallStarted) < kinds.index(ToolCallFinished) < kinds.index(TurnEnd)
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert (finished.name, finished.summary, finished.ok) == ("calculate", "42", True)
    end = events[-1]
    assert end.reply == "The tool calculate returned: 42"
    assert [m["role"] for m in end.messages] == ["user", "assistant", "tool", "assistant"]
    assert sum(isinstance(e, UsageReport) for e in events) == 2 and not end.usage.estimated
    await agent.aclose()


async def test_history_reaches_the_upstream(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("ok"))
    agent = AIAgent.from_config(model_config(fake.url, system_prompt="be brief"), tools=[])
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    await collect(agent, "next", history)
    sent = fake.requests[0].body
    assert [m["content"] for m in sent["messages"]] == ["be brief", "hi", "hello", "next"]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    await agent.aclose()


async def test_callback_gets_every_delta_in_order_then_none_once(demo_url: str) -> None:
    seen: list = []
    agent = AIAgent.from_config(model_config(demo_url), tools=[], stream_callback=seen.append)
    result = await agent.arun_conversation("echo: a b c d e f")
    assert seen == ["a", " b", " c", " d", " e", " f", None]
    assert result.reply == "a b c d e f"
    await agent.aclose()


async def test_sync_tools_run_off_the_event_loop_and_async_tools_are_awaited() -> None:
    import threading
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def sync_tool(x: int) -> int:
        threads.append(threading.get_ident())
        return x * 2

    async def async_tool(x: int) -> str:
        await asyncio.sleep(0)
        return f"async {x}"

    tools = [Tool("double", "doubles", sync_tool, {"type": "object", "properties": {"x": {"type": "integer"}}}),
             Tool("later", "async", async_tool, {"type": "object", "properties": {"x": {"type": "integer"}}})]
    agent = AIAgent.from_config(model_config(), tools=tools)
    end = (await collect(agent, 'tool: double {"x": 21}'))[-1]
    assert end.reply == "The tool double returned: 42" and threads and threads[0] != loop_thread
    end = (await collect(agent, 'tool: later {"x": 1}'))[-1]
    assert end.reply == "The tool later returned: async 1"
    await agent.aclose()


async def test_interrupt_mid_stream_closes_the_upstream_connection_within_a_second(fake: ScriptedUpstream) -> None:
    fake.add(("data", {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                       "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
             ("forever", 0.02))
    agent = AIAgent.from_config(model_config(fake.url), tools=[])
    events = []
    interrupted_at = None
    async for event in agent.astream("go"):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) == 5:
            interrupted_at = time.monotonic()
            agent.interrupt()
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.interrupted
    assert end.raw == texts(events) and end.raw.startswith("tick0 tick1 ")
    await asyncio.wait_for(fake.disconnected.wait(), 1.0)
    assert fake.requests[0].disconnected_at - interrupted_at < 1.0
    await agent.aclose()


async def test_cancelling_the_consumer_task_closes_the_upstream_connection(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("start ")[:2], ("forever", 0.02))
    agent = AIAgent.from_config(model_config(fake.url), tools=[])
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in agent.astream("go"):
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake.disconnected.wait(), 1.0)
    await agent.aclose()


def test_run_conversation_sync_wrapper() -> None:
    agent = AIAgent.from_config(model_config(), tools=[])
    assert agent.run_conversation("echo: sync works").reply == "sync works"
    assert agent.run_conversation("echo: twice").reply == "twice"  # a second event loop is fine


def test_demo_llm_command_serves_the_agent_as_a_real_upstream() -> None:
    with subprocess.Popen([sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0",
                           "--tokens-per-second", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            line = proc.stdout.readline()
            match = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line)
            assert match, line + proc.stderr.read()
            agent = AIAgent.from_config(model_config(match.group(1)), tools=[])
            assert agent.run_conversation("echo: over a real socket").reply == "over a real socket"
        finally:
            proc.terminate()
            assert proc.wait(timeout=10) == 0  # SIGTERM is a clean stop


async def test_interrupt_before_the_turn_starts_ends_it_at_once(fake: ScriptedUpstream) -> None:
    agent = AIAgent.from_config(model_config(fake.url), tools=[])
    stream = agent.astream("never sent")
    agent.interrupt()
    events = [e async for e in stream]
    assert len(events) == 1 and events[0].interrupted and events[0].reply == ""
    assert fake.requests == []
    # The next turn is not affected.
    fake.add(*text_stream("fresh"))
    assert (await collect(agent, "again"))[-1].reply == "fresh"
    await agent.aclose()


async def test_configured_timeouts_reach_the_http_client(fake: ScriptedUpstream) -> None:
    agent = AIAgent.from_config(model_config(fake.url, timeouts={"connect": 1.5}), tools=[], max_retries=4)
    client = agent._pool.all()[0].client
    assert client.timeout.connect == 1.5 and client.timeout.read is None and client.max_retries == 4
    await agent.aclose()


async def test_interrupt_during_the_non_streaming_call_ends_the_turn(fake: ScriptedUpstream) -> None:
    fake.add(("sleep", 30))
    agent = AIAgent.from_config(model_config(fake.url), tools=[])  # no callback: the plain path
    task = asyncio.create_task(agent.arun_conversation("slow"))
    while not fake.requests:
        await asyncio.sleep(0.01)
    agent.interrupt()
    end = await asyncio.wait_for(task, 2)
    assert end.interrupted and end.reply == "" and end.error is None
    await asyncio.wait_for(fake.disconnected.wait(), 1.0)
    await agent.aclose()


def test_script_style_construction() -> None:
    agent = AIAgent(tools=[])  # nothing at all: the demo model
    assert agent.model.is_demo and agent.run_conversation("echo: hi").reply == "hi"
    agent = AIAgent("gpt-4o-mini", base_url="http://127.0.0.1:1/v1", api_key="k", tools=[])
    assert (agent.model.endpoint.name, agent.model.endpoint.base_url) == ("gpt-4o-mini", "http://127.0.0.1:1/v1")
    with pytest.raises(TypeError):
        AIAgent(model_config().model, base_url="http://x", tools=[])


async def test_one_agent_serves_concurrent_turns_independently(demo_url: str) -> None:
    agent = AIAgent.from_config(model_config(demo_url))
    messages = [f"echo: reply number {i}" for i in range(8)] + ['tool: calculate {"expression": "3 * 3"}']
    ends = await asyncio.gather(*(collect(agent, m) for m in messages))
    assert [e[-1].reply for e in ends] == [f"reply number {i}" for i in range(8)] + [
        "The tool calculate returned: 9"]
    await agent.aclose()


async def test_agent_as_async_context_manager_closes_its_clients(demo_url: str) -> None:
    async with AIAgent.from_config(model_config(demo_url), tools=[]) as agent:
        assert (await agent.arun_conversation("echo: ctx")).reply == "ctx"
        client = agent._pool.all()[0].client
    assert client.is_closed()


@pytest.mark.parametrize("transport", ["fast", "sdk"])
async def test_a_model_that_never_stops_is_cut_at_max_reply_chars(fake: ScriptedUpstream, transport: str) -> None:
    """Tokens that never stop: the reply stops at model.max_reply_chars, the upstream's connection is closed
    (which stops the model), and the turn ends cut (finish_reason length, the note) with what was said kept."""
    fake.add(("forever", 0))
    agent = AIAgent.from_config(model_config(fake.url, transport=transport, max_reply_chars=500), tools=[])
    events = await collect(agent, "count for ever")
    end = events[-1]
    assert isinstance(end, TurnEnd)
    shown = texts(events)
    assert len(shown) == 500 and shown.startswith("tick0 tick1 ")
    assert (end.reply, end.finish_reason, end.error, end.interrupted) == (shown.strip(), "length", None, False)
    assert end.note and "cut" in end.note
    assert end.messages[-1] == {"role": "assistant", "content": shown}
    await asyncio.wait_for(fake.disconnected.wait(), 10)  # the model was stopped: the connection is gone


def test_max_reply_chars_is_checked_in_one_line() -> None:
    from hermes_gateway._core.config import ConfigError, parse_config
    assert parse_config({"model": {"max_reply_chars": 5000}}).model.max_reply_chars == 5000
    assert parse_config({}).model.max_reply_chars == 200_000
    for bad in (0, -1, 10**12, "many", 2.5):
        with pytest.raises(ConfigError) as caught:
            parse_config({"model": {"max_reply_chars": bad}})
        assert "model.max_reply_chars" in str(caught.value) and "\n" not in str(caught.value)
