"""The sdk transport: the body's keys reach the upstream whether or not ``create`` names them; odd answers."""

from __future__ import annotations

import pytest

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.errors import MalformedResponse
from hermes_gateway._core.agent.transport_sdk import SdkTransport

from scripted_upstream import ScriptedUpstream, completion, model_config, text_stream


def sdk_transport(url: str) -> tuple[AIAgent, SdkTransport]:
    agent = AIAgent.from_config(model_config(url, transport="sdk"), tools=[])
    transport = agent._pool.all()[0].transport
    assert isinstance(transport, SdkTransport)
    return agent, transport


async def test_keys_create_does_not_name_travel_as_extra_body(fake: ScriptedUpstream) -> None:
    fake.add(("json", completion("ok")))
    fake.add(*text_stream("streamed"))
    agent, transport = sdk_transport(fake.url)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "top_k": 5,
            "chat_template_kwargs": {"enable_thinking": False}}
    answer = await transport.call("/chat/completions", body)
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "ok"}
    stream = await transport.open_stream("/chat/completions", {**body, "stream": True})
    assert stream.content_type.startswith("text/event-stream")
    payloads = []
    try:
        while True:
            payloads.append(await stream.next())
    except StopAsyncIteration:
        pass
    await stream.aclose()
    assert [p["choices"][0]["delta"].get("content") for p in payloads if p["choices"]] == ["", "streamed", None]
    assert fake.requests[0].body == body and fake.requests[1].body == {**body, "stream": True}
    await agent.aclose()


async def test_a_json_answer_to_a_stream_request_shows_in_its_content_type(fake: ScriptedUpstream) -> None:
    fake.add(("json", completion("not a stream")))
    agent, transport = sdk_transport(fake.url)
    stream = await transport.open_stream("/chat/completions", {"model": "m", "messages": [], "stream": True})
    assert stream.content_type.startswith("application/json")
    await stream.aclose()
    await agent.aclose()


async def test_an_answer_that_is_not_json_is_malformed(fake: ScriptedUpstream) -> None:
    fake.add(("raw", b"plain words"))  # 200, text/event-stream, not JSON
    agent, transport = sdk_transport(fake.url)
    with pytest.raises(MalformedResponse):
        await transport.call("/chat/completions", {"model": "m", "messages": []})
    with pytest.raises(ValueError, match="no SDK method"):
        await transport.call("/embeddings", {"model": "m"})
    await agent.aclose()
