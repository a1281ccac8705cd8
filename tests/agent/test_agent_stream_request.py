"""The requests on plain aiohttp send what the openai SDK would, and fail and retry as it would."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_gateway._core.agent import AIAgent, stream_request
from hermes_gateway._core.agent.errors import UpstreamConnectionError, UpstreamStatusError, UpstreamTimedOut
from hermes_gateway._core.agent.transport_sdk import SdkTransport
from hermes_gateway._core.demo.transport import httpx
from hermes_gateway._core.events import TextDelta

from scripted_upstream import ScriptedUpstream, completion, model_config, text_stream

SECRET = "sk-stream-request-secret"
#: Set by the HTTP library itself (not by the SDK): they may differ between httpx and aiohttp. And
#: ``X-Stainless-Raw-Response``: it tells the SDK how to hand back the answer (``with_raw_response``: "true",
#: ``with_streaming_response``: "stream", plain ``create``: absent); servers ignore it.
TRANSPORT_HEADERS = {"accept-encoding", "connection", "content-length", "host", "x-stainless-raw-response"}


def agent_for(url: str, **model: object) -> AIAgent:
    model = {"timeouts": {"first_token": 2, "stall": 2, "connect": 2}, **model}
    return AIAgent.from_config(model_config(url, api_key=SECRET, **model), tools=[])


def sending(client: openai.AsyncOpenAI) -> SdkTransport:
    """The sdk transport on a copy of a fast upstream's SDK client (same settings) that really sends."""
    return SdkTransport(client.copy(http_client=httpx.AsyncClient()))


def sdk_headers(seen: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in seen.items() if k.lower() not in TRANSPORT_HEADERS}


async def test_the_streamed_request_carries_the_sdks_headers_and_body(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("hello ", "there"))
    fake.add(*text_stream("again"))
    agent = agent_for(fake.url)
    upstream = agent._pool.all()[0]
    assert upstream.transport.kind == "fast"  # an http:// URL and no proxy: the aiohttp path
    text = "".join([e.text async for e in agent.astream("hi") if isinstance(e, TextDelta)])
    assert text == "hello there"
    body = fake.requests[0].body
    # The same request made by the SDK itself (its public create()), for comparison.
    stream = await sending(upstream.client).open_stream("/chat/completions", body)
    await stream.aclose()
    ours, sdks = fake.requests[0], fake.requests[1]
    assert ours.path == sdks.path == "/v1/chat/completions"
    assert ours.body == sdks.body and ours.body["stream"] is True
    assert sdk_headers(ours.headers) == sdk_headers(sdks.headers)
    assert sdk_headers(ours.headers)["authorization"] == f"Bearer {SECRET}"
    assert sdk_headers(ours.headers)["x-stainless-retry-count"] == "0"
    await agent.aclose()


async def test_a_non_streamed_call_carries_the_sdks_headers_and_body(fake: ScriptedUpstream) -> None:
    fake.add(("json", completion("one")))
    fake.add(("json", completion("two")))
    agent = agent_for(fake.url)
    upstream = agent._pool.all()[0]
    body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.5}
    ours = await upstream.transport.call("/chat/completions", body)
    sdks = await sending(upstream.client).call("/chat/completions", body)
    assert ours["choices"][0]["message"]["content"] == "one" and sdks["choices"][0]["message"]["content"] == "two"
    mine, theirs = fake.requests
    assert mine.path == theirs.path == "/v1/chat/completions" and mine.body == theirs.body == body
    assert sdk_headers(mine.headers) == sdk_headers(theirs.headers)
    assert "X-Stainless-Raw-Response" not in mine.headers  # as a plain create() sends it
    await agent.aclose()


async def test_retryable_statuses_are_retried_as_the_sdk_does_then_stream(fake: ScriptedUpstream) -> None:
    fake.add(("status", 503, {"error": {"message": "busy"}}, {"retry-after-ms": "5"}))
    fake.add(("status", 429, {"error": {"message": "slow down"}}, {"retry-after-ms": "5"}))
    fake.add(*text_stream("third ", "time"))
    agent = agent_for(fake.url)
    text = "".join([e.text async for e in agent.astream("hi") if isinstance(e, TextDelta)])
    assert text == "third time"
    assert [r.headers["x-stainless-retry-count"] for r in fake.requests] == ["0", "1", "2"]
    await agent.aclose()


async def test_a_client_error_carries_the_sdks_message_and_body_and_is_not_retried(fake: ScriptedUpstream) -> None:
    fake.add(("status", 400, {"error": {"message": "bad temperature", "type": "invalid_request_error"}}))
    fake.add(("status", 500, {"error": {"message": "no"}}, {"x-should-retry": "false"}))
    agent = agent_for(fake.url)
    upstream = agent._pool.all()[0]
    with pytest.raises(UpstreamStatusError) as caught:
        await upstream.transport.open_stream("/chat/completions", {"model": "m", "messages": []})
    assert caught.value.status_code == 400 and caught.value.body["message"] == "bad temperature"
    assert str(caught.value) == "Error code: 400 - bad temperature"
    with pytest.raises(UpstreamStatusError) as caught:  # x-should-retry: false is obeyed
        await upstream.transport.open_stream("/chat/completions", {"model": "m", "messages": []})
    assert caught.value.status_code == 500
    assert len(fake.requests) == 2
    await agent.aclose()


async def test_a_refused_connection_is_a_connection_error_after_the_retries() -> None:
    agent = AIAgent(model_config("http://127.0.0.1:9/v1").model, tools=[], max_retries=1)
    upstream = agent._pool.all()[0]
    with pytest.raises(UpstreamConnectionError) as caught:
        await upstream.transport.open_stream("/chat/completions", {"model": "m", "messages": []})
    assert not isinstance(caught.value, UpstreamTimedOut) and not caught.value.mid_stream
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
    await agent.aclose()


def test_the_fast_transport_is_used_only_where_fast_transport_suits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def kind(url: str | None, **model: object) -> str:
        agent = AIAgent(model_config(url, **model).model, tools=[])
        found = agent._pool.all()[0].transport.kind
        await agent.aclose()
        return found

    assert asyncio.run(kind("http://127.0.0.1:8000/v1")) == "fast"
    assert asyncio.run(kind("http://127.0.0.1:8000/v1", transport="sdk")) == "sdk"
    assert asyncio.run(kind("http://alice:secret@127.0.0.1:8000/v1")) == "sdk"
    assert asyncio.run(kind(None)) == "fast"  # the demo model, called in-process (transport_demo.py)
    assert asyncio.run(kind(None, transport="sdk")) == "sdk"  # ... or through the SDK, still in-process
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.lan:3128")
    assert asyncio.run(kind("https://api.example/v1")) == "sdk"
    assert asyncio.run(kind("http://127.0.0.1:8000/v1")) == "fast"  # HTTPS_PROXY is for https URLs only
    monkeypatch.setenv("NO_PROXY", "localhost,.example")  # exempt: httpx would connect directly too
    assert asyncio.run(kind("https://api.example/v1")) == "fast"
    assert asyncio.run(kind("https://api.openai.com/v1")) == "sdk"


async def test_turns_that_start_together_share_one_connection_pool(fake: ScriptedUpstream,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of first turns on a fresh agent sets the connection pool up once (it used to make one per turn,
    leaking all but the last with their connections)."""
    pools: list[stream_request.Http1Pool] = []
    real = stream_request.Http1Pool

    def counted(*args: object, **kwargs: object) -> stream_request.Http1Pool:
        pools.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return pools[-1]

    monkeypatch.setattr(stream_request, "Http1Pool", counted)
    for i in range(20):
        fake.add(*text_stream(f"reply {i}"))
    agent = agent_for(fake.url)

    async def turn() -> str:
        return "".join([e.text async for e in agent.astream("hi") if isinstance(e, TextDelta)])
    replies = await asyncio.gather(*(turn() for _ in range(20)))
    assert sorted(replies) == sorted(f"reply {i}" for i in range(20))
    assert len(pools) == 1
    await agent.aclose()
    assert pools[0]._closed and not pools[0]._open


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10)


@given(tools=st.lists(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3), min_size=1, max_size=3),
       messages=st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                                "content": st.text()}), min_size=1, max_size=3),
       extra=st.dictionaries(st.sampled_from(["stream", "stream_options", "temperature"]), JSON_VALUES))
def test_the_body_bytes_are_exactly_the_sdks_whether_or_not_the_tools_were_cached(tools, messages, extra) -> None:
    encoder = stream_request.BodyEncoder()
    for body in ({"model": "m", "messages": messages, "tools": tools, **extra},  # tools encoded and cached
                 {"model": "m", "messages": messages[:1], "tools": tools, **extra},  # the cached tools reused
                 {"model": "m", "messages": messages, **extra},  # no tools
                 {"model": "m", "messages": messages, "tools": [*tools, {"x": 1}]}):  # a new list: encoded afresh
        expected = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        assert encoder.encode(body) == expected


def test_a_body_with_nan_is_refused_as_the_sdk_refuses_it() -> None:
    encoder = stream_request.BodyEncoder()
    tools = [{"type": "function"}]
    encoder.encode({"model": "m", "tools": tools})
    with pytest.raises(ValueError):
        encoder.encode({"model": "m", "temperature": float("nan"), "tools": tools})


def test_a_body_that_holds_the_tools_marker_itself_still_gets_the_exact_bytes() -> None:
    encoder = stream_request.BodyEncoder()
    tools = [{"type": "function", "function": {"name": "t"}}]
    body = {"model": "m", "messages": [{"role": "user", "content": encoder._marker}], "tools": tools}
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    assert encoder.encode(body) == expected
    assert encoder.encode(body) == expected  # the tools now cached
