"""Reasoning never reaches a chat: every preview and the final message on the reference screen.

The filter itself is tested in ``tests/test_reasoning.py``; here it is the
delivery core's: what a person sees in the chat while a reply streams.
"""

from __future__ import annotations

import asyncio

import pytest
from delivery_helpers import streaming

from hermes_gateway import RateBudget, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery, deliver_events
from hermes_gateway._core.events import TextDelta, TurnEnd
from hermes_gateway._core.reasoning import postprocess_reply
from hermes_gateway.testing import ReferencePlatform, run_virtual

SECRET = "SECRET"


def deliver(chunks: list[str], *, starts_open: bool = False, limit: int = 4096, final: str | None = None):
    """Stream ``chunks`` into a reference chat as the gateway does; return the chat."""
    ref = ReferencePlatform(max_message_length=limit, budgets={"default": RateBudget(rate=50.0, burst=10)})
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    config = parse_config({"model": {"reasoning_starts_open": starts_open}}, env={})
    raw = "".join(chunks)
    reply = postprocess_reply(raw, starts_open=starts_open) if final is None else final

    async def events():
        for chunk in chunks:
            yield TextDelta(chunk)
            await asyncio.sleep(0.3)
        yield TurnEnd(reply=reply, raw=raw)

    async def main():
        session = Delivery(plugins, config).session("reference", "c", settings=streaming(edit_interval=0.5))
        return await deliver_events(events(), session)

    report = run_virtual(main())
    return ref.chat("c"), report


def everything_shown(chat) -> list[str]:
    return [text for message in chat.messages for text in message.history]


LEAKS = {
    "opened in the prompt": ["The user", " wants ", SECRET, " plans.\n", "</think>", "\n\nHello", " there."],
    "attributes": ['<think type="analysis">', "The user wants ", SECRET, "</think>", "Hello", " there."],
    "upper case": ["<THINK>", SECRET, " plan", "</THINK>\n\n", "Hello there."],
    "split tags": ["<thi", "nking>", SECRET, "</thin", "king>", "Hello there."],
}


@pytest.mark.parametrize("case", ["attributes", "upper case", "split tags"])
def test_no_preview_ever_shows_reasoning(case):
    chat, report = deliver(LEAKS[case])
    assert chat.screen == ["Hello there."]
    assert len(everything_shown(chat)) >= 2, "the reply was previewed"
    assert not any(SECRET in text or "think" in text.lower() for text in everything_shown(chat))
    assert report.delivered


def test_with_reasoning_starts_open_a_reply_opened_in_the_prompt_never_shows_its_reasoning():
    chat, _ = deliver(LEAKS["opened in the prompt"], starts_open=True)
    assert chat.screen == ["Hello there."]
    assert len(everything_shown(chat)) >= 2
    assert not any(SECRET in text for text in everything_shown(chat))


def test_without_the_flag_the_reasoning_goes_from_the_chat_at_the_closing_tag():
    chunks = LEAKS["opened in the prompt"]
    chat, _ = deliver(chunks)
    shown = everything_shown(chat)
    assert any(SECRET in text for text in shown), "before the closing tag nobody can know it is reasoning"
    first_answer = next(i for i, text in enumerate(shown) if "Hello" in text)
    assert not any(SECRET in text for text in shown[first_answer:]), "the reply never shows beside the reasoning"
    assert chat.screen == ["Hello there."]


def test_without_the_flag_reasoning_that_overflowed_into_several_messages_is_replaced_by_the_reply():
    long_reasoning = [f"{SECRET} step {i}. " for i in range(40)]
    chat, report = deliver([*long_reasoning, "</think>", "Hello there."], limit=200)
    # The ledger leaves no message showing stale text: the reply is spread over the messages already sent.
    assert "".join(chat.screen) == "Hello there."
    assert not any(SECRET in text for text in chat.screen)
    assert report.delivered


def test_the_final_text_of_a_session_fed_without_a_final_uses_the_flag():
    ref = ReferencePlatform()
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    config = parse_config({"model": {"reasoning_starts_open": True}}, env={})

    async def main():
        session = Delivery(plugins, config).session("reference", "c", settings=streaming())
        for chunk in ["plan ", SECRET, "</think>", "Answer"]:
            session.feed(chunk)
        return await session.finish()

    run_virtual(main())
    assert ref.chat("c").screen == ["Answer"]
    assert not any(SECRET in text for text in everything_shown(ref.chat("c")))
