"""The demo model on the fast transport: called in-process, read by the same SSE reader, no SDK imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.errors import UpstreamStatusError
from hermes_gateway._core.agent.transport_demo import DemoDirectTransport
from hermes_gateway._core.events import StreamReset, TextDelta, ToolCallFinished, TurnEnd

from scripted_upstream import model_config

PROMPTS = ["echo: the same words either way", "tool: calculate {\"expression\": \"6 * 7\"}",
           "think: hidden thoughts, then this", "hello, who are you?"]


async def events_of(message: str, **model: object) -> list[object]:
    agent = AIAgent.from_config(model_config(**model))
    try:
        return [event async for event in agent.astream(message)]
    finally:
        await agent.aclose()


def seen(events: list[object]) -> list[tuple]:
    """What a person's screen and the history get from a turn (ids of the demo's completions aside)."""
    shown: list[tuple] = []
    for event in events:
        if isinstance(event, TextDelta):
            shown.append(("text", event.text))
        elif isinstance(event, ToolCallFinished):
            shown.append(("tool", event.name, event.summary))
        elif isinstance(event, StreamReset):
            shown.append(("reset",))
        elif isinstance(event, TurnEnd):
            shown.append(("end", event.reply, event.error, event.usage))
    return shown


@pytest.mark.parametrize("api_mode", ["chat_completions", "responses"])
async def test_the_demo_model_answers_alike_in_process_and_through_the_sdk(api_mode: str) -> None:
    for prompt in PROMPTS:
        fast = seen(await events_of(prompt, api_mode=api_mode))
        sdk = seen(await events_of(prompt, api_mode=api_mode, transport="sdk"))
        assert fast == sdk, prompt
        assert fast[-1][2] is None and fast[-1][1], prompt  # a reply, no error
    echoed = seen(await events_of(PROMPTS[0], api_mode=api_mode))
    assert "".join(part[1] for part in echoed if part[0] == "text") == "the same words either way"


async def test_a_demo_error_is_the_status_error_a_real_upstream_gives() -> None:
    transport = DemoDirectTransport(0)
    with pytest.raises(UpstreamStatusError) as caught:
        await transport.open_stream("/chat/completions", {"model": "demo", "messages": "not a list",
                                                          "stream": True})
    assert caught.value.status_code == 400 and "messages must be a list" in caught.value.message
    answer = await transport.call("/chat/completions", {"model": "demo", "messages": [
        {"role": "user", "content": "echo: not streamed"}]})
    assert answer["choices"][0]["message"]["content"] == "not streamed"


async def test_closing_the_stream_stops_the_demo_model_mid_reply() -> None:
    transport = DemoDirectTransport(1000)
    stream = await transport.open_stream("/chat/completions", {"model": "demo", "stream": True, "messages": [
        {"role": "user", "content": "echo: " + "word " * 200}]})
    first = await stream.next()
    assert first["choices"][0]["delta"]
    await stream.aclose()
    with pytest.raises(StopAsyncIteration):
        await stream.next()


def test_a_demo_turn_never_imports_the_openai_sdk() -> None:
    """A newcomer's first command and every demo gateway a test starts stay off the SDK (~0.8 s of CPU)."""
    script = (
        "import asyncio, json, sys\n"
        "from hermes_gateway._core.agent import AIAgent\n"
        "from hermes_gateway._core.config import parse_config\n"
        "async def main():\n"
        "    agent = AIAgent.from_config(parse_config({'model': {'demo': {'tokens_per_second': 0}}}))\n"
        "    reply = (await agent.arun_conversation('echo: no SDK here')).reply\n"
        "    await agent.aclose()\n"
        "    return reply\n"
        "reply = asyncio.run(main())\n"
        "print(json.dumps([reply, sorted(m for m in ('openai', 'httpx', 'httpx2', 'pydantic') if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["no SDK here", []]
