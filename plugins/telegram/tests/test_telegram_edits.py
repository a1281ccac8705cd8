"""A person edits their message on the Telegram emulator while the reply streams: one superseded reply, one answer."""

from __future__ import annotations

from hermes_telegram import polling
from telegram_test_support import CURSOR, eventually, gateway_for, spy_on_receive

NOTE = "✏️ Superseded by your edit."


async def test_an_edit_during_the_reply_supersedes_it_and_the_edited_text_is_answered(api):
    words = " ".join(f"w{i}" for i in range(60))
    async with gateway_for(api.base_url, tokens_per_second=10):
        await api.push_message(7, f"echo: {words}")
        await eventually(lambda: len(api.screen(7)) == 1 and len(api.screen(7)[0]) > 10, lambda: api.chat(7).calls)
        await api.push_edit(7, 1, "echo: the question I meant")
        await eventually(lambda: len(api.screen(7)) == 2 and api.screen(7)[1] == "the question I meant",
                         lambda: api.screen(7))
    superseded, answer = api.screen(7)
    shown, note = superseded.split("\n\n")
    assert words.startswith(shown) and shown != words and CURSOR.strip() not in superseded
    assert note == NOTE and ("italic", NOTE) in api.chat(7).formatted(0)
    assert answer == "the question I meant"
    assert not api.chat(7).violations


async def test_edits_are_asked_for_and_an_edit_of_an_answered_message_is_ignored(api):
    assert polling.ALLOWED_UPDATES == ["message", "edited_message", "callback_query"]  # presses: approvals
    async with gateway_for(api.base_url) as gateway:
        _, replies = spy_on_receive(gateway)
        await api.push_message(8, "echo: first")
        await eventually(lambda: api.screen(8) == ["first"], lambda: api.screen(8))
        await eventually(lambda: bool(replies), lambda: replies)
        await replies[0]  # answered: the turn is over (an edit while it is recorded: tests/inbound/test_inbound_edits)
        await api.push_edit(8, 1, "echo: first, edited later")
        await api.push_message(8, "echo: second")
        await eventually(lambda: api.screen(8) == ["first", "second"], lambda: api.screen(8))
    assert any(m == "getUpdates" and "edited_message" in str(p.get("allowed_updates")) for m, p in api.requests)
