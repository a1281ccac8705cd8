"""The fast transport: a non-streamed answer must be a JSON object; a read cut short is a connection error."""

from __future__ import annotations

import pytest

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.errors import MalformedResponse, UpstreamConnectionError
from hermes_gateway._core.agent.transport_fast import FastTransport

from scripted_upstream import ScriptedUpstream, chunk, completion, model_config


def fast_transport(url: str) -> tuple[AIAgent, FastTransport]:
    agent = AIAgent.from_config(model_config(url), tools=[])
    transport = agent._pool.all()[0].transport
    assert isinstance(transport, FastTransport)
    return agent, transport


async def test_a_non_streamed_answer_is_its_json(fake: ScriptedUpstream) -> None:
    fake.add(("json", completion("ok", usage=(1, 1))))
    fake.add(("raw", b"plain words"))
    fake.add(("json", [1, 2]))
    agent, transport = fast_transport(fake.url)
    answer = await transport.call("/chat/completions", {"model": "m", "messages": []})
    assert answer["choices"][0]["message"]["content"] == "ok" and answer["usage"]["total_tokens"] == 2
    with pytest.raises(MalformedResponse, match="not JSON"):
        await transport.call("/chat/completions", {"model": "m", "messages": []})
    with pytest.raises(MalformedResponse, match="list, not an object"):
        await transport.call("/chat/completions", {"model": "m", "messages": []})
    await agent.aclose()


async def test_a_stream_cut_off_is_a_mid_stream_connection_error_after_what_arrived(fake: ScriptedUpstream) -> None:
    fake.add(("data", chunk("first")), ("sleep", 0.2), ("drop",))
    agent, transport = fast_transport(fake.url)
    stream = await transport.open_stream("/chat/completions", {"model": "m", "messages": [], "stream": True})
    assert (await stream.next())["choices"][0]["delta"]["content"] == "first"
    with pytest.raises(UpstreamConnectionError) as caught:
        await stream.next()
    assert caught.value.mid_stream
    await stream.aclose()
    await agent.aclose()
