"""Replies streamed through the real delivery core into the emulator, as a person in the chat sees them."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway import RateBudget
from hermes_gateway import utf16_length
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import CURSOR, SETTINGS, TOKEN, delivery_for, fast_runner


async def stream(delivery, chat_id, reply, *, pieces=30, thread_id=None, chat_kind=None, settings=SETTINGS):
    session = delivery.session("telegram", str(chat_id), settings=settings, thread_id=thread_id,
                               chat_kind=chat_kind)
    session.start()
    step = max(1, len(reply) // pieces)
    for start in range(0, len(reply), step):
        session.feed(reply[start:start + step])
        await asyncio.sleep(0.01)
    return await session.finish()


@pytest.fixture
async def tg(api):
    tg = fast_runner(api.base_url)
    yield tg
    await tg.client.close()


PARAGRAPHS = ("Streaming into Telegram means one message that grows. " * 4 + "\n\n"
              + "The last edit carries the exact final text, with *markdown* rendered, typed_ kept, no cursor. " * 2)
#: What the chat shows at the end: the emphasis markers became italic entities; the lone ``_`` stays as typed.
SHOWN = PARAGRAPHS.strip().replace("*", "").replace(" \n\n", "\n\n")  # and no space before a break


async def test_previews_grow_in_one_message_then_the_exact_final_text(api, tg):
    report = await stream(delivery_for(tg), 42, PARAGRAPHS)
    chat = api.chat(42)
    assert report.delivered, report.error
    assert chat.screen == [SHOWN]
    assert chat.formatted() == [("italic", "markdown"), ("italic", "markdown")]
    history = chat.messages[0].history
    previews = history[:-1]
    assert len(previews) >= 2, history
    assert all(p.endswith(CURSOR.strip()) for p in previews), "previews carry the cursor"
    assert all(SHOWN.startswith(p[: -len(CURSOR)].strip().replace("*", "")) for p in previews), \
        "previews are prefixes (a half-written *emphasis shows its marker until it closes)"
    assert CURSOR.strip() not in history[-1]
    assert chat.actions == [], "the text came at once: no typing call to hold its first send back"
    sent = [c for c in chat.calls if c.method in ("sendMessage", "editMessageText")]
    assert all("parse_mode" not in c.params for c in sent), "plain text: half-written markdown cannot break a send"
    assert not chat.violations


async def test_a_replys_text_calls_build_no_message_objects(api, tg, monkeypatch):
    """Nothing reads the Message Telegram answers with but its id: building one cost ~120 us per call (issue 39)."""
    from telegram import Message

    built = []
    de_json = Message.de_json
    monkeypatch.setattr(Message, "de_json", lambda *a, **k: built.append(1) or de_json(*a, **k))
    report = await stream(delivery_for(tg), 43, PARAGRAPHS)
    assert report.delivered and api.chat(43).screen == [SHOWN]
    assert len(api.chat(43).messages[0].history) >= 3, "a send, edits, the final edit"
    assert built == []


async def test_an_emoji_heavy_reply_splits_within_4096_utf16_units(api, tg):
    line = "Sunny days ahead 🌞🌈 and more 🎉🎉 fun 😀\n"
    reply = (line * 260).strip()
    assert len(reply) < 4096 * 3 and utf16_length(reply) > 4096 * 2   # chars alone would undercount
    report = await stream(delivery_for(tg), 7, reply, pieces=40)
    screen = api.chat(7).screen
    assert report.delivered, report.error
    assert len(screen) == 3
    assert all(utf16_length(text) <= 4096 for text in screen)
    assert "\n".join(screen) == reply, "split at line ends, nothing lost or repeated"
    assert not api.chat(7).violations  # no 400 "message is too long" ever


async def test_a_long_reply_split_at_spaces_keeps_every_word(api, tg):
    reply = " ".join(f"word{i}" + ("." if i % 12 == 11 else "") for i in range(1500))
    report = await stream(delivery_for(tg), 8, reply, pieces=60)
    screen = api.chat(8).screen
    assert report.delivered, report.error
    assert len(screen) >= 3 and all(utf16_length(t) <= 4096 for t in screen)
    assert " ".join(screen).split() == reply.split(), "no word cut in half, lost or repeated"


async def test_a_429_is_honoured_before_the_next_call_into_that_chat(api, tg):
    delivery = delivery_for(tg)
    calls = api.chat(9).calls
    api.inject_rate_limit(9, 1, at_call=2)  # after the typing indicator and the first preview
    report = await stream(delivery, 9, PARAGRAPHS)
    assert report.delivered, report.error
    assert api.chat(9).screen == [SHOWN]
    [limited] = [i for i, c in enumerate(calls) if c.outcome == "rate_limited"]
    assert limited + 1 < len(calls), "the reply went on after the wait"
    assert calls[limited + 1].at - calls[limited].at >= 1.0 - 0.01, "no call before retry_after"
    assert report.rate_limited == 1
    assert not api.chat(9).violations


async def test_flood_control_from_telegram_is_waited_out_not_hammered():
    """A stricter server than the declared budget: every 429 is honoured and the reply still lands."""
    async with BotApiEmulator(TOKEN, rate_limit=RateBudget(rate=4, burst=2)) as api:
        tg = fast_runner(api.base_url)
        try:
            report = await stream(delivery_for(tg), 11, PARAGRAPHS, pieces=20)
        finally:
            await tg.client.close()
    chat = api.chat(11)
    assert report.delivered, report.error
    assert chat.screen == [SHOWN]
    assert chat.rate_limited, "the server did push back"
    assert not chat.violations, "no call arrived before its retry_after"


async def test_a_forum_topic_reply_goes_to_its_thread(api, tg):
    report = await stream(delivery_for(tg), -100123, "In the topic. " * 10, thread_id="77", chat_kind="supergroup")
    chat = api.chat(-100123)
    assert report.delivered, report.error
    assert chat.screen_in_thread("77") == [("In the topic. " * 10).strip()]
    assert all(str(c.params.get("message_thread_id")) == "77" for c in chat.calls if c.method != "editMessageText")


async def test_streaming_off_sends_the_reply_once(api, tg):
    from hermes_gateway import StreamSettings

    report = await stream(delivery_for(tg), 12, PARAGRAPHS, settings=StreamSettings(enabled=False))
    chat = api.chat(12)
    assert report.delivered, report.error
    assert chat.screen == [SHOWN] and chat.messages[0].history == [SHOWN]
    assert [c.method for c in chat.calls if c.method != "sendChatAction"] == ["sendMessage"]


async def test_in_a_group_only_the_first_message_of_a_long_reply_quotes_the_question(api, tg):
    session = delivery_for(tg).session("telegram", "-100777", settings=SETTINGS, chat_kind="group",
                                           reply_to="31")
    session.start()
    reply = "\n\n".join(f"Paragraph {i}. " + "words " * 150 for i in range(12))
    session.feed(reply)
    report = await session.finish()
    chat = api.chat(-100777)
    assert report.delivered, report.error
    assert len(chat.screen) >= 2
    assert chat.quotes == {chat.messages[0].id: 31}


async def test_a_reply_with_a_long_run_of_spaces_is_still_delivered(api, tg):
    reply = "start" + " " * 9000 + "end"
    report = await stream(delivery_for(tg), 13, reply, pieces=3)
    assert report.delivered, report.error
    assert " ".join(api.chat(13).screen).split() == ["start", "end"]
