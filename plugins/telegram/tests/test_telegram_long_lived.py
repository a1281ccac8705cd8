"""What Telegram throws at a bot that runs for months: migrations, deleted messages, blocks, limits, outages."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hermes_gateway import StreamSettings
from hermes_telegram import polling
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import CURSOR, SETTINGS, TOKEN, delivery_for, eventually, fast_runner, gateway_for

REPLY = "The answer comes in several words, streamed one after another into the chat. " * 3


@pytest.fixture
async def tg(api):
    tg = fast_runner(api.base_url)
    yield tg
    await tg.client.close()


async def stream(delivery, chat_id, reply, *, pieces=20, chat_kind=None, settings=SETTINGS, between=None,
                 at=0.5):
    session = delivery.session("telegram", str(chat_id), settings=settings, chat_kind=chat_kind)
    session.start()
    step = max(1, len(reply) // pieces)
    for index, start in enumerate(range(0, len(reply), step)):
        session.feed(reply[start:start + step])
        await asyncio.sleep(0.01)
        if between is not None and index == int(pieces * at):
            await between()
    return await session.finish()


async def test_a_group_that_became_a_supergroup_is_answered_under_its_new_id(api, tg):
    api.migrate_chat(-500, -100500)
    delivery = delivery_for(tg)
    report = await stream(delivery, -500, REPLY, chat_kind="group")
    assert report.delivered, report.error
    assert api.screen(-500) == [] and api.screen(-100500) == [REPLY.strip()]
    assert tg.client.migrated == {"-500": "-100500"}
    report = await stream(delivery, -500, "And the next reply goes straight there.", chat_kind="group")
    assert report.delivered and api.screen(-100500)[-1] == "And the next reply goes straight there."
    refused = [c for c in api.chat(-500).calls if "upgraded to a supergroup" in c.outcome]
    assert len(refused) == 1, "the move is learnt once, not rediscovered on every call"


async def test_a_migration_in_the_middle_of_a_reply_moves_the_rest_there(api, tg):
    async def migrate():
        await eventually(lambda: api.screen(-600) != [], lambda: api.chat(-600).calls)
        api.migrate_chat(-600, -100600)
    report = await stream(delivery_for(tg), -600, REPLY, chat_kind="group", between=migrate)
    assert report.delivered, report.error
    assert api.screen(-100600) == [REPLY.strip()], "the final text is shown, once, in the new chat"


async def test_a_deleted_message_gets_the_final_text_sent_anew(api, tg):
    async def delete():
        await eventually(lambda: api.screen(7) != [], lambda: api.chat(7).calls)
        api.delete_message(7, api.chat(7).messages[0].id)
    report = await stream(delivery_for(tg), 7, REPLY, between=delete)
    assert report.delivered, report.error
    assert api.screen(7) == [REPLY.strip()]
    assert any(c.outcome == "message to edit not found" for c in api.chat(7).calls)


@pytest.mark.parametrize("refuse", ["block_bot", "remove_chat"])
async def test_a_chat_that_is_gone_ends_the_reply_with_one_log_line_and_no_retries(api, tg, caplog, refuse):
    caplog.set_level(logging.INFO)
    getattr(api, refuse)(8)
    report = await stream(delivery_for(tg), 8, REPLY)
    assert not report.delivered
    calls = api.chat(8).calls
    assert len(calls) == 1, f"the first refusal (typing or text) ends it, nothing more is tried: {calls}"
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(problems) == 1 and "\n" not in problems[0].getMessage()
    assert ("blocked" if refuse == "block_bot" else "chat not found") in problems[0].getMessage().lower()


async def test_a_gone_chat_is_tried_again_when_a_new_reply_starts(api, tg):
    api.block_bot(9)
    delivery = delivery_for(tg)
    assert not (await stream(delivery, 9, REPLY)).delivered
    api.chat(9).refusal = None  # the person unblocked the bot and wrote again
    assert (await stream(delivery, 9, "Welcome back.")).delivered
    assert api.screen(9) == ["Welcome back."]


async def test_a_server_with_a_lower_limit_gets_the_final_text_split_further():
    async with BotApiEmulator(TOKEN, max_text_units=1000) as api:
        tg = fast_runner(api.base_url)
        try:
            reply = " ".join(f"Line {i} of a long answer." for i in range(110))  # ~2,900 characters
            report = await stream(delivery_for(tg), 10, reply, settings=StreamSettings(enabled=False))
        finally:
            await tg.client.close()
    screen = api.chat(10).screen
    assert report.delivered, report.error
    assert len(screen) >= 3 and all(len(text) <= 1000 for text in screen)
    assert " ".join(screen).split() == reply.split(), "every word once, in order"


async def test_a_preview_the_server_finds_too_long_stops_previews_and_the_final_text_still_lands():
    async with BotApiEmulator(TOKEN, max_text_units=300) as api:
        tg = fast_runner(api.base_url)
        try:
            reply = "word " * 150
            report = await stream(delivery_for(tg), 11, reply, pieces=10)
        finally:
            await tg.client.close()
    screen = api.chat(11).screen
    assert report.delivered, report.error
    assert " ".join(screen).split() == reply.split() and not any(t.endswith(CURSOR.strip()) for t in screen)


async def test_polling_backs_off_while_telegram_is_unreachable(api, monkeypatch):
    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.05)
    api.fail_method("getUpdates", 502, "Bad Gateway", times=4)
    async with gateway_for(api.base_url, tokens_per_second=0, poll_timeout=1):
        await api.push_message(12, "echo: back again")
        await eventually(lambda: api.screen(12) == ["back again"], lambda: api.chat(12).messages)
    polls = [t for (method, _), t in zip(api.requests, api.request_times) if method == "getUpdates"]
    gaps = [b - a for a, b in zip(polls, polls[1:5])]
    assert len(gaps) == 4
    assert all(gap >= 0.05 * 2 ** i * 0.9 for i, gap in enumerate(gaps)), f"doubling waits, never a spin: {gaps}"



async def test_the_poll_loop_reports_its_connection_and_asks_at_once_while_not_connected(api, monkeypatch):
    """Connected after the first answered poll (asked with timeout=0, so at once), long polls after that;
    a failing poll is reported with its error, and the quick poll after it says when Telegram is back."""
    from hermes_gateway.testing import PlatformRunner
    from hermes_telegram import plugin
    from telegram_test_support import section

    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.05)
    async with PlatformRunner(plugin, section(api.base_url, poll_timeout=2)) as runner:
        context = runner.context
        await eventually(lambda: context.connection == "connected", lambda: api.requests)
        api.fail_method("getUpdates", 502, "Bad Gateway")
        await eventually(lambda: context.connection == "disconnected", lambda: api.requests, timeout=10)
        assert "Bad Gateway" in context.connection_error and TOKEN not in context.connection_error
        await eventually(lambda: context.connection == "connected", lambda: api.requests, timeout=10)
    timeouts = [int(p.get("timeout", 0)) for m, p in api.requests if m == "getUpdates"]
    assert timeouts[:2] == [0, 2], "the first poll answers at once; once connected, long polls"
    assert 0 in timeouts[2:], f"the poll after the failure asks at once again: {timeouts}"
