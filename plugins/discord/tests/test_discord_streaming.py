"""Replies streamed through the real delivery core and discord.py into the emulator, as a person sees them."""

from __future__ import annotations

import asyncio
import logging

import pytest

from discord_test_support import CURSOR, SETTINGS, TOKEN, eventually, runner_for
from hermes_gateway import StreamSettings
from hermes_gateway.testing.conformance import same_text
from hermes_discord.emulator import DiscordEmulator


async def stream(delivery, chat_id, reply, *, pieces=30, thread_id=None, chat_kind=None, settings=SETTINGS,
                 reply_to=None, gap=0.01):
    session = delivery.session("discord", str(chat_id), settings=settings, thread_id=thread_id,
                               chat_kind=chat_kind, reply_to=reply_to)
    session.start()
    step = max(1, len(reply) // pieces)
    for start in range(0, len(reply), step):
        session.feed(reply[start:start + step])
        await asyncio.sleep(gap)
    return await session.finish()


@pytest.fixture
async def runner(loose_api):
    """A client pointed at the emulator, sending only (as ``ask`` runs it), no pacing."""
    async with runner_for(loose_api) as runner:
        yield runner


PARAGRAPHS = ("Streaming into Discord means one message that grows. " * 4 + "\n\n"
              + "The last edit carries the exact final text, <@&42> and @everyone included, and no cursor. " * 2)


def long_reply_with_code() -> str:
    """About 5,000 characters: prose, a Python code block in the middle, more prose."""
    prose = " ".join(f"Sentence {i} explains one more step of the answer." for i in range(40))
    code = "```python\n" + "\n".join(f"def step_{i}(x):\n    return x * {i} + 1\n" for i in range(45)) + "```"
    tail = " ".join(f"Closing remark {i} wraps it up." for i in range(40))
    return f"{prose}\n\n{code}\n\n{tail}"


async def test_a_5000_character_reply_with_code_ends_as_three_messages_within_discords_limits(api):
    """Discord's own budgets against the emulator's real buckets: three messages, no 429, exact text."""
    reply = long_reply_with_code()
    assert 4800 <= len(reply) <= 5200 and reply.count("```") == 2
    async with runner_for(api, fast=False) as runner:  # the declared per-channel and bot budgets, Discord's edit interval
        report = await stream(runner.delivery(), api.general, reply, pieces=60, gap=0.08,  # ~5 s of tokens
                              settings=StreamSettings(enabled=True, edit_interval=1.25, min_tokens=5))
    channel = api.channel(api.general)
    assert report.delivered, report.error
    screen = channel.screen
    assert len(screen) == 3, screen
    assert all(len(text) <= 2000 for text in screen)
    assert same_text(screen, reply), "the messages join to the reply: nothing lost, nothing repeated"
    assert all(text.count("```") % 2 == 0 for text in screen), "every message renders its code block whole"
    assert not any(CURSOR.strip() in text for text in screen), "no cursor left"
    assert len({m.id for m in channel.messages}) == 3 and len(set(screen)) == 3, "no duplicate message"
    assert channel.rate_limited == [] and report.rate_limited == 0, "0 x 429 under Discord's buckets"
    assert channel.emptied == 0, "the bucket never ran dry, so discord.py never waited for a reset"
    assert not api.violations
    assert len(channel.messages[0].history) >= 2, "the first message grew by edits before it was final"


async def test_previews_grow_in_one_message_then_the_exact_final_text(loose_api, runner):
    api = loose_api
    report = await stream(runner.delivery(), api.general, PARAGRAPHS)
    channel = api.channel(api.general)
    assert report.delivered, report.error
    assert channel.screen == [PARAGRAPHS.strip()]
    history = channel.messages[0].history
    previews = history[:-1]
    assert len(previews) >= 2, history
    assert all(p.endswith(CURSOR.strip()) for p in previews), "previews carry the cursor"
    assert CURSOR.strip() not in history[-1]
    assert channel.typing == 0, "the text came at once: no typing call to hold its first send back"
    sent = [c for c in channel.calls if c.method in ("create", "edit")]
    assert all(c.params["allowed_mentions"] == {"parse": []} for c in sent), "the model's mentions ping nobody"
    assert not api.violations


async def test_a_channel_429_is_honoured_to_the_millisecond_and_the_final_text_arrives_once(loose_api, runner):
    api = loose_api
    calls = api.channel(api.general).calls
    api.inject_rate_limit(api.general, 1.25, at_call=2)  # after the typing indicator and the first preview
    report = await stream(runner.delivery(), api.general, PARAGRAPHS)
    assert report.delivered, report.error
    assert api.screen(api.general) == [PARAGRAPHS.strip()]
    [limited] = [i for i, c in enumerate(calls) if c.outcome == "rate_limited"]
    assert limited + 1 < len(calls), "the reply went on after the wait"
    assert calls[limited + 1].at - calls[limited].at >= 1.25 - 0.001, "no call before retry_after"
    assert report.rate_limited == 1, "discord.py did not sleep on the 429 and retry by itself: the core saw it"
    assert not api.violations


async def test_a_global_429_is_honoured_to_the_millisecond_in_every_channel(loose_api, runner):
    api = loose_api
    other = api.text_channel("other")
    api.inject_rate_limit(api.general, 1.5, is_global=True, at_call=2)
    delivery = runner.delivery()
    first = asyncio.create_task(stream(delivery, api.general, PARAGRAPHS))
    await asyncio.sleep(0.3)
    second = await stream(delivery, other, "Meanwhile, in another channel. " * 5)
    report = await first
    assert report.delivered and second.delivered
    assert api.screen(api.general) == [PARAGRAPHS.strip()]
    assert api.screen(other) == [("Meanwhile, in another channel. " * 5).strip()]
    everything = sorted(api.channel(api.general).calls + api.channel(other).calls, key=lambda c: c.at)
    [limited] = [c for c in everything if c.outcome == "global_rate_limited"]
    after = [c for c in everything if c.at > limited.at]
    assert after and min(c.at for c in after) - limited.at >= 1.5 - 0.001, "no call anywhere before retry_after"
    assert not api.violations


async def test_discord_py_never_sleeps_on_a_429(loose_api, runner):
    """A long 429 ends the call at once, one request, as RateLimited: the library's retry loop never ran."""
    from hermes_gateway import RateLimited, Stream

    api = loose_api
    api.inject_rate_limit(api.general, 25.0)
    with pytest.raises(RateLimited) as caught:
        await asyncio.wait_for(runner.client.on_delta(Stream(platform=runner.platform, chat_id=api.general), None, "hi"), 5)
    assert caught.value.retry_after == 25.0
    assert [c.outcome for c in api.channel(api.general).calls] == ["rate_limited"]
    with pytest.raises(RateLimited) as again:  # the window is known: Discord is not asked during it
        await runner.client.on_delta(Stream(platform=runner.platform, chat_id=api.general), None, "hi")
    assert 20 < again.value.retry_after <= 25.0
    assert len(api.channel(api.general).calls) == 1 and api.screen(api.general) == []


async def test_a_server_stricter_than_the_budget_is_not_hit():
    """Buckets tighter than the declared budget: discord.py waits for the reset after the answer that
    emptied the bucket (see hermes_discord.ratelimit), so Discord still never answers 429."""
    async with DiscordEmulator(TOKEN, bucket_limit=2, bucket_window=1.0) as api:
        async with runner_for(api) as runner:
            report = await stream(runner.delivery(), api.general, PARAGRAPHS, pieces=30, gap=0.05)
        channel = api.channel(api.general)
        assert report.delivered, report.error
        assert channel.screen == [PARAGRAPHS.strip()]
        assert channel.emptied >= 1, "the server's bucket did run dry"
        assert channel.rate_limited == [] and not api.violations


async def test_a_thread_reply_goes_into_the_thread(loose_api, runner):
    api = loose_api
    thread = api.thread(api.general)
    report = await stream(runner.delivery(), api.general, "In the thread. " * 10, thread_id=thread,
                          chat_kind="thread")
    assert report.delivered, report.error
    assert api.screen(thread) == [("In the thread. " * 10).strip()]
    assert api.screen(api.general) == []


async def test_streaming_off_sends_the_reply_once(loose_api, runner):
    api = loose_api
    report = await stream(runner.delivery(), api.general, PARAGRAPHS, settings=StreamSettings(enabled=False))
    channel = api.channel(api.general)
    assert report.delivered, report.error
    assert channel.screen == [PARAGRAPHS.strip()] and channel.messages[0].history == [PARAGRAPHS.strip()]
    assert [c.method for c in channel.calls if c.method != "typing"] == ["create"]


async def test_in_a_server_channel_only_the_first_message_replies_to_the_question(loose_api, runner):
    api = loose_api
    question = await api.push_message(api.general, "a long question")
    reply = "\n\n".join(f"Paragraph {i}. " + "words " * 60 for i in range(12))
    report = await stream(runner.delivery(), api.general, reply, chat_kind="guild", reply_to=question)
    channel = api.channel(api.general)
    assert report.delivered, report.error
    assert len(channel.screen) >= 2
    assert channel.references == {channel.messages[0].id: question}


async def test_a_dm_reply_does_not_quote(loose_api, runner):
    api = loose_api
    dm = api.dm()
    question = await api.push_message(dm, "just us")
    report = await stream(runner.delivery(), dm, "Hello there.", chat_kind="dm", reply_to=question)
    assert report.delivered and api.screen(dm) == ["Hello there."]
    assert api.channel(dm).references == {}


async def test_a_message_deleted_mid_stream_is_sent_anew(loose_api, runner):
    api = loose_api
    delivery = runner.delivery()
    session = delivery.session("discord", api.general, settings=SETTINGS)
    session.start()
    session.feed("The first part ")
    session.feed("of the answer, ")
    await eventually(lambda: api.screen(api.general) != [], lambda: api.channel(api.general).calls)
    [shown] = api.channel(api.general).messages
    api.delete_message(api.general, shown.id)
    session.feed("and the rest of it.")
    report = await session.finish()
    assert report.delivered, report.error
    assert api.screen(api.general) == ["The first part of the answer, and the rest of it."]
    assert any(c.outcome == "Unknown Message" for c in api.channel(api.general).calls)


async def test_missing_permissions_stop_the_reply_with_one_log_line(loose_api, runner, caplog):
    api = loose_api
    api.deny_permissions(api.general)
    caplog.set_level(logging.INFO, logger="hermes_discord")
    report = await stream(runner.delivery(), api.general, PARAGRAPHS)
    assert not report.delivered
    calls = api.channel(api.general).calls
    assert [c.outcome for c in calls] == ["Missing Permissions"], "one refused call, then Discord is left alone"
    lines = [r for r in caplog.records if r.name.startswith("hermes_discord")]
    assert len(lines) == 1 and "50013" in lines[0].getMessage()


async def test_an_over_long_text_is_a_clear_error_not_a_retry(loose_api, runner):
    from hermes_gateway import DeliveryError, Stream

    api = loose_api
    with pytest.raises(DeliveryError) as caught:
        await runner.client.on_stream_end(Stream(platform=runner.platform, chat_id=api.general), None, "x" * 2001)
    assert not caught.value.retryable and "50035" in str(caught.value) and "2000" in str(caught.value)
    assert api.screen(api.general) == []
