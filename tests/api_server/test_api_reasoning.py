"""Reasoning never reaches an API client's content: the SSE bytes of both wire formats.

The agent is real; a scripted upstream streams the model's raw text in the
chunks each test chooses (tags cut anywhere, any case, attributes, a reply
that opens inside reasoning).
"""

from __future__ import annotations

import json
import logging

import pytest

import hermes_gateway._core.reasoning as reasoning_module
from api_helpers import MODEL, gateway_config, parse_sse, post_raw, running_gateway

CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
RESP = {"model": MODEL, "input": "hi", "stream": True}
SECRET = "SECRET"

LEAKS = {
    "attributes": ['<think type="analysis">', "The user wants ", SECRET, "</think>", "Hello", " there."],
    "upper case": ["<THINK>", SECRET, " plan", "</THINK>\n\n", "Hello there."],
    "split tags": ["<thi", "nking>", SECRET, "</thin", "king>", "Hello there."],
    "opened in the prompt": ["The user", " wants ", SECRET, " plans.\n", "</think>", "\n\nHello", " there."],
}


def chunks_script(chunks):
    async def script(body, s):
        await s.role()
        for chunk in chunks:
            await s.text(chunk)
        await s.finish()
    return script


def chat_wire(raw: bytes) -> tuple[str, str]:
    """(content, reasoning_content) a Chat Completions client accumulates from the raw SSE bytes."""
    content, reasoning = [], []
    for event in parse_sse(raw)[:-1]:
        for choice in event.json().get("choices", []):
            content.append(choice["delta"].get("content") or "")
            reasoning.append(choice["delta"].get("reasoning_content") or "")
    return "".join(content), "".join(reasoning)


def responses_wire(raw: bytes) -> tuple[str, str]:
    """(the deltas joined, the completed response's text) of a Responses stream."""
    events = [e for e in parse_sse(raw) if not isinstance(e, str)]
    deltas = "".join(e.json()["delta"] for e in events if e.event == "response.output_text.delta")
    done = [e.json() for e in events if e.event == "response.output_text.done"]
    return deltas, done[0]["text"]


async def stream_both(upstream, chunks, *, starts_open: bool, expose: bool = True):
    """``expose``: api_server.expose_reasoning (these tests look at where the reasoning went, so it is on)."""
    upstream.stream_script = chunks_script(chunks)
    config = gateway_config(api={"expose_reasoning": expose},
                            model=upstream.model_config(reasoning_starts_open=starts_open))
    async with running_gateway(config) as gw:
        status, _, chat = await post_raw(f"{gw.url}/v1/chat/completions", CHAT)
        assert status == 200
        status, _, resp = await post_raw(f"{gw.url}/v1/responses", RESP)
        assert status == 200
        status, _, whole = await post_raw(f"{gw.url}/v1/chat/completions", {**CHAT, "stream": False})
        assert status == 200
    return chat_wire(chat), responses_wire(resp), json_message(whole)


def json_message(raw: bytes) -> dict:
    return json.loads(raw)["choices"][0]["message"]


@pytest.mark.parametrize("case", ["attributes", "upper case", "split tags"])
async def test_reasoning_never_reaches_the_content(upstream, case):
    (content, reasoning), (deltas, done), message = await stream_both(upstream, LEAKS[case], starts_open=False)
    assert content == deltas == done == message["content"] == "Hello there."
    assert SECRET in reasoning and SECRET in message["reasoning_content"]
    assert "think" not in reasoning.lower()


@pytest.mark.parametrize("case", ["attributes", "split tags"])
async def test_by_default_reasoning_reaches_no_client_at_all(upstream, case):
    (content, reasoning), (deltas, done), message = await stream_both(upstream, LEAKS[case], starts_open=False,
                                                                      expose=False)
    assert content == deltas == done == message["content"] == "Hello there."
    assert reasoning == "" and "reasoning_content" not in message


async def test_a_reply_opened_in_the_prompt_with_reasoning_starts_open(upstream):
    chunks = LEAKS["opened in the prompt"]
    (content, reasoning), (deltas, done), message = await stream_both(upstream, chunks, starts_open=True)
    assert content == deltas == done == message["content"] == "Hello there."
    assert reasoning == message["reasoning_content"] == f"The user wants {SECRET} plans.\n"


async def test_a_reply_opened_in_the_prompt_without_the_flag_keeps_what_was_sent_and_says_how_to_fix_it(
        upstream, caplog, monkeypatch):
    caplog.set_level(logging.WARNING, logger="hermes_gateway._core.reasoning")
    monkeypatch.setattr(reasoning_module, "_warned", False)  # the warning is once per process
    chunks = LEAKS["opened in the prompt"]
    (content, _), (deltas, done), message = await stream_both(upstream, chunks, starts_open=False)
    # SSE bytes cannot be taken back: the text sent before the lone </think> stays, the reply follows it.
    assert content == deltas == done == f"The user wants {SECRET} plans.\n\nHello there."
    # A non-streaming reply is whole before it is sent: reasoning is where it belongs.
    assert message["content"] == "Hello there." and SECRET in message["reasoning_content"]
    assert "model.reasoning_starts_open: true" in caplog.text
