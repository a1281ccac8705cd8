"""Chat Completions streaming against scripted upstreams: reassembly, usage, and every failure shape.

Each failure must end in a fallback answer or a clear error — never a hang,
never text shown twice. "Shown" here is what a consumer that honours
StreamReset would display: the text deltas since the last reset.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from hermes_gateway import Tool
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
from hermes_gateway._core.events import StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, UsageReport

from scripted_upstream import ScriptedUpstream, chunk, completion, model_config, text_stream, usage_chunk

FAST = {"timeouts": {"first_token": 0.5, "stall": 0.3, "connect": 2}}
SECRET = "sk-test-secret-123"


async def run(agent: AIAgent, message: str = "hi") -> list:
    return [e async for e in agent.astream(message)]


def shown(events: list) -> str:
    """What a person sees: text since the last StreamReset."""
    text = ""
    for event in events:
        if isinstance(event, StreamReset):
            text = ""
        elif isinstance(event, TextDelta):
            text += event.text
    return text


def agent_for(url: str, tools=(), **model) -> AIAgent:
    return AIAgent.from_config(model_config(url, api_key=SECRET, **{**FAST, **model}), tools=list(tools))


def echo_tool(name: str) -> Tool:
    return Tool(name, "echo", lambda **kw: json.dumps(kw, sort_keys=True),
                {"type": "object", "properties": {}})


async def test_text_deltas_arrive_in_order_and_usage_only_last_chunk_is_used(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("Hel", "lo, ", "wor", "ld", usage=(11, 4)))
    events = await run(agent_for(fake.url))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "wor", "ld"]
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert usage == [UsageReport(11, 4, 15, estimated=False)]
    assert events[-1].usage == usage[0] and events[-1].reply == "Hello, world"


async def test_missing_usage_is_estimated_and_marked(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("a reply of some twenty characters"))
    end = (await run(agent_for(fake.url)))[-1]
    assert end.usage.estimated and end.usage.completion_tokens == 9  # 33 chars / 4, rounded up
    assert end.usage.prompt_tokens > 0 and end.usage.total_tokens == end.usage.prompt_tokens + 9


async def test_tool_call_deltas_split_and_interleaved_are_reassembled_exactly(fake: ScriptedUpstream) -> None:
    args_a = json.dumps({"city": "Paris", "days": 3, "units": "metric", "note": "ünïcode ✓"})
    args_b = json.dumps({"query": "weather \"quoted\" and {braces}"})
    size_a, size_b = -(-len(args_a) // 10), -(-len(args_b) // 10)
    pieces_a = [args_a[i * size_a:(i + 1) * size_a] for i in range(10)]
    pieces_b = [args_b[i * size_b:(i + 1) * size_b] for i in range(10)]
    steps = [("data", chunk(role="assistant")),
             ("data", chunk(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                                         "function": {"name": "alpha", "arguments": ""}}])),
             ("data", chunk(tool_calls=[{"index": 1, "id": "call_b", "type": "function",
                                         "function": {"name": "beta"}}]))]
    for a, b in zip(pieces_a, pieces_b):
        steps.append(("data", chunk(tool_calls=[{"index": 1, "function": {"arguments": b}}])))
        steps.append(("data", chunk(tool_calls=[{"index": 0, "function": {"arguments": a}}])))
    steps += [("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n")]
    fake.add(*steps)
    fake.add(*text_stream("done"))
    events = await run(agent_for(fake.url, tools=[echo_tool("alpha"), echo_tool("beta")]))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.call_id, s.name, s.index) for s in started] == [("call_a", "alpha", 0), ("call_b", "beta", 1)]
    # ToolCallStarted comes the moment the name arrives: before any arguments did.
    assert events.index(started[1]) == events.index(started[0]) + 1
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [json.loads(f.arguments) for f in finished] == [json.loads(args_a), json.loads(args_b)]
    assert [f.arguments for f in finished] == [args_a, args_b]
    second = fake.requests[1].body["messages"]
    assert second[-3]["tool_calls"][0]["function"]["arguments"] == args_a
    assert second[-3]["tool_calls"][1]["function"]["arguments"] == args_b
    assert [m["tool_call_id"] for m in second[-2:]] == ["call_a", "call_b"]
    assert json.loads(second[-2]["content"]) == json.loads(args_a)


async def test_drop_mid_stream_falls_back_to_one_non_streaming_call_and_resets(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("Hello ")), ("data", chunk("wor")), ("drop",))
    fake.add(("json", completion("Hello world, complete.", usage=(5, 4))))
    events = await run(agent_for(fake.url))
    kinds = [type(e) for e in events]
    assert kinds.count(StreamReset) == 1 and kinds.index(StreamReset) == 2
    assert shown(events) == "Hello world, complete."
    end = events[-1]
    assert end.reply == end.raw == "Hello world, complete." and end.error is None
    assert fake.requests[1].body.get("stream") in (None, False)


async def test_malformed_json_mid_stream_falls_back(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("par")), ("raw", b"data: {not json\n\n"))
    fake.add(("json", completion("recovered")))
    events = await run(agent_for(fake.url))
    assert shown(events) == "recovered" and events[-1].reply == "recovered"


async def test_error_object_mid_stream_falls_back(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("par")),
             ("data", {"error": {"message": "overloaded", "type": "server_error"}}), ("raw", b"data: [DONE]\n\n"))
    fake.add(("json", completion("second try")))
    events = await run(agent_for(fake.url))
    assert shown(events) == "second try" and events[-1].error is None


async def test_stream_closed_without_finish_or_done_is_incomplete_and_falls_back(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("cut")))  # server ends the body here
    fake.add(("json", completion("whole answer")))
    events = await run(agent_for(fake.url))
    assert shown(events) == "whole answer"
    assert sum(isinstance(e, StreamReset) for e in events) == 1


async def test_missing_done_after_a_finished_answer_is_accepted_without_waiting_long(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("complete")), ("data", chunk(finish="stop")),
             ("data", usage_chunk(3, 1)), ("sleep", 30))
    loop = asyncio.get_running_loop()
    start = loop.time()
    events = await run(agent_for(fake.url, timeouts={"stall": 10, "first_token": 10}))
    assert loop.time() - start < 5  # the tail wait is short, not the 10 s stall
    assert events[-1].reply == "complete" and len(fake.requests) == 1
    assert events[-1].usage == UsageReport(3, 1, 4)


async def test_stall_between_chunks_is_cut_by_the_stall_timeout(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("slow")), ("sleep", 30))
    fake.add(("json", completion("fast answer")))
    events = await asyncio.wait_for(run(agent_for(fake.url)), 10)
    assert shown(events) == "fast answer"
    await asyncio.wait_for(fake.disconnected.wait(), 2)  # the stalled request was abandoned


async def test_no_first_token_in_time_then_non_streaming_also_stalls_gives_clear_error(
        fake: ScriptedUpstream) -> None:
    fake.add(("sleep", 30))
    fake.add(("sleep", 30))
    events = await asyncio.wait_for(run(agent_for(fake.url)), 10)
    end = events[-1]
    assert end.error and "first token" in end.error and "response" in end.error
    assert end.reply == "" and not any(isinstance(e, TextDelta) for e in events)
    assert SECRET not in end.error


async def test_http_500_after_sdk_retries_goes_to_the_fallback_endpoint(fake: ScriptedUpstream, demo_url: str) -> None:
    error = ("status", 500, {"error": {"message": "boom", "type": "server_error"}}, {"retry-after-ms": "5"})
    fake.add(error)
    fake.add(error)
    fake.add(error)
    agent = agent_for(fake.url, fallback=[{"base_url": demo_url, "name": "demo"}])
    events = await run(agent)
    assert len(fake.requests) == 3  # the SDK retried twice; no non-streaming retry on a dead endpoint
    assert events[-1].reply.startswith("Hello! I am the built-in demo model")
    assert events[-1].error is None and not any(isinstance(e, StreamReset) for e in events)


async def test_http_500_everywhere_is_a_clear_one_line_error(fake: ScriptedUpstream) -> None:
    fake.default = [("status", 500, {"error": {"message": "kaput", "type": "server_error"}},
                     {"retry-after-ms": "5"})]
    end = (await run(agent_for(fake.url)))[-1]
    assert end.error.startswith("the model is unavailable: test-model at http://127.0.0.1:")
    assert "HTTP 500: kaput" in end.error and "\n" not in end.error and SECRET not in end.error
    assert end.reply == "" and not end.interrupted


async def test_http_429_after_retries_tries_the_next_endpoint(fake: ScriptedUpstream) -> None:
    limited = ("status", 429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"retry-after-ms": "5"})
    async with ScriptedUpstream() as backup:
        fake.default = [limited]
        backup.add(*text_stream("from ", "backup"))
        agent = agent_for(fake.url, fallback=[{"base_url": backup.url, "name": "backup-model"}])
        events = await run(agent)
        assert events[-1].reply == "from backup"
        assert len(fake.requests) == 3 and backup.requests[0].body["model"] == "backup-model"
        # A fallback without its own key inherits the primary's.
        assert backup.requests[0].body["stream"] is True


async def test_connection_refused_goes_to_the_fallback(demo_url: str) -> None:
    agent = agent_for("http://127.0.0.1:9/v1", fallback=[{"base_url": demo_url, "name": "demo"}])
    agent_with_no_retries = AIAgent(agent.model, tools=[], max_retries=0)
    end = (await run(agent_with_no_retries, "echo: fallback works"))[-1]
    assert end.reply == "fallback works" and end.error is None


async def test_failed_retry_after_partial_text_keeps_the_partial_text_once(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("partial ")), ("data", chunk("text")), ("drop",))
    fake.add(("status", 400, {"error": {"message": "nope", "type": "invalid_request_error"}}))
    events = await run(agent_for(fake.url))
    end = events[-1]
    assert end.error and "connection lost mid-stream" in end.error and "HTTP 400: nope" in end.error
    assert shown(events) == "partial text" == end.raw and not any(isinstance(e, StreamReset) for e in events)


async def test_upstream_that_does_not_stream_is_remembered_for_that_upstream_only(fake: ScriptedUpstream,
                                                                                   demo_url: str) -> None:
    fake.add(("json", completion("plain answer")))   # ignores stream=true and answers JSON
    fake.add(("json", completion("plain answer")))
    fake.add(("json", completion("second turn")))
    agent = agent_for(fake.url)
    events = await run(agent)
    assert events[-1].reply == "plain answer" and shown(events) == "plain answer"
    assert [r.body.get("stream") for r in fake.requests] == [True, None]
    end = (await run(agent))[-1]
    assert end.reply == "second turn" and fake.requests[2].body.get("stream") is None  # no second probe
    other = agent_for(demo_url)
    streamed = [e for e in await run(other, "echo: still streams here") if isinstance(e, TextDelta)]
    assert len(streamed) == 3  # a different upstream is unaffected
    STREAM_SUPPORT.forget()


@pytest.mark.parametrize("api_mode", ["chat_completions", "responses"])
async def test_results_without_callback_equal_the_streaming_results(demo_url: str, api_mode: str) -> None:
    for message in ["echo: same either way", "think: hidden then shown", "hello",
                    'tool: calculate {"expression": "2 ** 10"}', 'tool: calculate {"expression": "1/0"}']:
        config = model_config(demo_url, api_mode=api_mode)
        streaming = AIAgent.from_config(config, stream_callback=lambda _: None)
        plain = AIAgent.from_config(config)
        a = await streaming.arun_conversation(message)
        b = await plain.arun_conversation(message)
        assert (a.reply, a.raw, a.error, a.usage) == (b.reply, b.raw, b.error, b.usage), message
        assert [{k: v for k, v in m.items() if k != "tool_calls"} for m in a.messages] == \
               [{k: v for k, v in m.items() if k != "tool_calls"} for m in b.messages]


async def test_non_streaming_path_sends_no_stream_flag(fake: ScriptedUpstream) -> None:
    fake.add(("json", completion("plain", usage=(2, 1))))
    end = await agent_for(fake.url).arun_conversation("hi")
    assert end.reply == "plain" and end.usage == UsageReport(2, 1, 3)
    assert "stream" not in fake.requests[0].body


async def test_text_of_successive_model_calls_is_joined_by_a_blank_line(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk("Let me check.", role="assistant")),
             ("data", chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                         "function": {"name": "alpha", "arguments": "{}"}}])),
             ("data", chunk(finish="tool_calls")), ("raw", b"data: [DONE]\n\n"))
    fake.add(*text_stream("It is done."))
    events = await run(agent_for(fake.url, tools=[echo_tool("alpha")]))
    assert shown(events) == "Let me check.\n\nIt is done." == events[-1].reply
    assert [m["role"] for m in events[-1].messages] == ["user", "assistant", "tool", "assistant"]


async def test_upstream_rejecting_stream_options_streams_without_them(fake: ScriptedUpstream) -> None:
    fake.add(("status", 400, {"error": {"message": "Unrecognized request argument supplied: stream_options",
                                        "type": "invalid_request_error"}}))
    fake.add(*text_stream("still ", "streamed"))
    fake.add(*text_stream("again"))
    agent = agent_for(fake.url)
    events = await run(agent)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["still ", "streamed"]
    assert events[-1].usage.estimated and "stream_options" not in fake.requests[1].body
    assert fake.requests[1].body["stream"] is True
    await run(agent)
    assert "stream_options" not in fake.requests[2].body  # remembered for this upstream


async def test_consumer_closing_the_stream_early_closes_the_upstream_connection(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("first ")[:2], ("forever", 0.02))
    stream = agent_for(fake.url).astream("go")
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()
    await asyncio.wait_for(fake.disconnected.wait(), 1.0)


async def test_fallbacks_are_tried_in_order(fake: ScriptedUpstream, demo_url: str) -> None:
    fake.default = [("status", 503, {"error": {"message": "maintenance", "type": "server_error"}})]
    config = model_config(fake.url, fallback=[{"base_url": "http://127.0.0.1:9/v1", "name": "gone"},
                                              {"base_url": demo_url, "name": "last-resort"}], **FAST)
    agent = AIAgent.from_config(config, tools=[], max_retries=0)
    events = await run(agent, "echo: third time lucky")
    assert events[-1].reply == "third time lucky" and events[-1].error is None
    assert len(fake.requests) == 1
    # When every one fails, the error lists them in the order they were tried.
    config = model_config(fake.url, fallback=[{"base_url": "http://127.0.0.1:9/v1", "name": "gone"}], **FAST)
    end = (await run(AIAgent.from_config(config, tools=[], max_retries=0)))[-1]
    assert end.error.index("HTTP 503: maintenance") < end.error.index("gone at http://127.0.0.1:9/v1 (stream): "
                                                                      "cannot connect")


async def test_an_upstream_echoing_the_key_never_gets_it_into_the_error(fake: ScriptedUpstream) -> None:
    fake.default = [("status", 401, {"error": {"message": f"Incorrect API key provided: {SECRET}.",
                                               "type": "invalid_request_error"}})]
    end = (await run(agent_for(fake.url)))[-1]
    assert "HTTP 401: Incorrect API key provided: ***." in end.error and SECRET not in end.error
    assert len(fake.requests) == 1  # an auth error is not retried, and no non-streaming retry either
