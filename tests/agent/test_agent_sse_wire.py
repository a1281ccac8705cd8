"""The agent's own SSE reading over real TCP: odd but valid framing, upstream errors, connection reuse.

The byte-level equivalence with the SDK is in ``test_agent_sse.py``; here a
scripted aiohttp upstream writes the frames (separate writes with pauses
between them arrive as separate reads) and the agent's reply is checked.
"""

from __future__ import annotations

import json

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.events import StreamReset, TextDelta, UsageReport

from scripted_upstream import ScriptedUpstream, chunk, completion, model_config, usage_chunk

FAST = {"timeouts": {"first_token": 2, "stall": 2, "connect": 2}}


def agent_for(url: str) -> AIAgent:
    return AIAgent.from_config(model_config(url, **FAST), tools=[])


async def run(agent: AIAgent, message: str = "hi") -> list:
    return [e async for e in agent.astream(message)]


def frame(payload: dict, end: bytes = b"\n") -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + end + end


async def test_crlf_pings_multi_line_data_and_chunks_split_across_reads_give_the_exact_reply(
        fake: ScriptedUpstream) -> None:
    hello = frame(chunk("H\u00e9llo"), b"\r\n")
    cut = hello.index("\u00e9".encode()) + 1  # inside the two-byte character
    split_json = json.dumps(chunk(", world")).replace(", ", ",\ndata: ", 1)
    fake.add(("raw", b": ping\r\n\r\n"), ("raw", frame(chunk(role="assistant"), b"\r\n")),
             ("raw", hello[:cut]), ("sleep", 0.05), ("raw", hello[cut:]),
             ("raw", f"data: {split_json}\n\n".encode()),
             ("raw", b": keep-alive\n\n"), ("raw", frame(chunk(finish="stop"))), ("raw", frame(usage_chunk(5, 3))),
             ("raw", b"data: [DONE]\r"), ("sleep", 0.05), ("raw", b"\n\r\n"))
    events = await run(agent_for(fake.url))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["H\u00e9llo", ", world"]
    assert events[-1].reply == "H\u00e9llo, world" and events[-1].error is None
    assert events[-1].usage == UsageReport(5, 3, 8)
    assert len(fake.requests) == 1  # read as a good stream: no fallback call


async def test_error_payload_mid_stream_reaches_the_turn_error_in_the_sdk_wording(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", chunk("partial")),
             ("data", {"error": {"message": "model overloaded", "type": "server_error"}}))
    fake.add(("status", 503, {"error": {"message": "still overloaded"}}))
    fake.default = [("status", 503, {"error": {"message": "still overloaded"}})]
    events = await run(agent_for(fake.url))
    end = events[-1]
    assert "(stream): upstream error: model overloaded" in end.error
    assert end.reply == "partial"  # what was shown stays, once
    assert not any(isinstance(e, StreamReset) for e in events)


async def test_a_json_chunk_of_the_wrong_shape_falls_back_with_a_clear_reason(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(role="assistant")), ("data", {"choices": {"first": {"delta": {"content": "x"}}}}))
    fake.add(("json", completion("recovered")))
    events = await run(agent_for(fake.url))
    assert events[-1].reply == "recovered" and events[-1].error is None
    fake.add(("data", {"choices": [{"index": 0, "delta": {"content": 42}, "finish_reason": None}]}))
    fake.add(("status", 400, {"error": {"message": "no"}}))
    end = (await run(agent_for(fake.url)))[-1]
    assert "(stream): MalformedChunk: a chunk of unexpected shape (TypeError: content is int" in end.error


async def test_tool_call_with_a_non_string_name_is_malformed_not_a_crash(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk(tool_calls=[{"index": 0, "id": "c1", "function": {"name": ["x"], "arguments": ""}}])))
    fake.add(("json", completion("plain answer")))
    end = (await run(agent_for(fake.url)))[-1]
    assert end.reply == "plain answer" and end.error is None


async def test_the_streamed_request_is_still_the_sdks_own(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk("ok", role="assistant")), ("data", chunk(finish="stop")), ("raw", b"data: [DONE]\n\n"))
    agent = AIAgent.from_config(model_config(fake.url, api_key="sk-wire-key", **FAST), tools=[])
    assert (await run(agent))[-1].reply == "ok"
    seen = fake.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == "Bearer sk-wire-key"
    assert seen.headers["User-Agent"].startswith("AsyncOpenAI/Python")
    assert seen.body["stream"] is True and seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["messages"] == [{"role": "user", "content": "hi"}]


async def test_a_finished_stream_leaves_its_connection_open_for_the_next_request(fake: ScriptedUpstream) -> None:
    for text in ("one", "two"):
        fake.add(("data", chunk(role="assistant")), ("data", chunk(text)), ("data", chunk(finish="stop")),
                 ("raw", b"data: [DONE]\n\n"))
    agent = agent_for(fake.url)
    assert (await run(agent))[-1].reply == "one"
    assert (await run(agent))[-1].reply == "two"
    first, second = fake.requests
    assert first.peer is not None and first.peer == second.peer  # the body was drained after [DONE]


# -- Responses mode reads its events the same way ---------------------------------------------------

def responses_agent(url: str) -> AIAgent:
    return AIAgent.from_config(model_config(url, api_mode="responses", **FAST), tools=[])


def event(kind: str, n: int, **data: object) -> bytes:
    payload = json.dumps({"type": kind, "sequence_number": n, **data})
    return f"event: {kind}\r\ndata: {payload}\r\n\r\n".encode()


def delta(n: int, text: object) -> bytes:
    return event("response.output_text.delta", n, item_id="msg_1", output_index=0, content_index=0, delta=text)


async def test_responses_events_with_crlf_pings_and_split_reads_give_the_exact_reply(fake: ScriptedUpstream) -> None:
    completed = {"id": "resp_1", "object": "response", "status": "completed", "output": [],
                 "usage": {"input_tokens": 4, "output_tokens": 2, "total_tokens": 6}}
    first = delta(1, "Gr\u00fc\u00df ")
    fake.add(("raw", b": ping\r\n\r\n"), ("raw", first[:30]), ("sleep", 0.05), ("raw", first[30:]),
             ("raw", delta(2, "Gott")), ("raw", event("response.completed", 3, response=completed)))
    events = [e async for e in responses_agent(fake.url).astream("hi")]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Gr\u00fc\u00df ", "Gott"]
    assert events[-1].reply == "Gr\u00fc\u00df Gott" and events[-1].usage == UsageReport(4, 2, 6)


async def test_responses_error_event_and_wrong_shapes_are_clear_reasons(fake: ScriptedUpstream) -> None:
    fake.add(("raw", delta(1, "Half")), ("raw", event("error", 2, code="rate_limit", message="slow down")))
    fake.add(("status", 400, {"error": {"message": "no"}}))
    end = [e async for e in responses_agent(fake.url).astream("hi")][-1]
    assert "(stream): UpstreamError: slow down" in end.error and end.reply == "Half"
    fake.add(("raw", delta(1, 7)))
    fake.add(("status", 400, {"error": {"message": "no"}}))
    end = [e async for e in responses_agent(fake.url).astream("hi")][-1]
    assert "(stream): MalformedChunk: an event of unexpected shape (TypeError: text delta is int" in end.error
