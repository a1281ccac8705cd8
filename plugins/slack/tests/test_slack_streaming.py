"""Replies streamed through the real delivery core into a Slack thread, as a person in it sees them:
native streaming, the edit transport it falls back to, expired streams, and Slack's two rate-limit answers."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hermes_gateway import MessageRef, RateLimited, Stream
from slack_test_support import CURSOR, SETTINGS, runner

THREAD = "1700000000.000100"


def words(n: int) -> str:
    return " ".join(f"word{i}" + ("." if i % 12 == 11 else "") for i in range(n))


async def stream(delivery, channel, reply, *, pieces=40, thread=THREAD, kind="im", between=None):
    session = delivery.session("slack", channel, settings=SETTINGS, thread_id=thread, chat_kind=kind)
    session.start()
    step = max(1, len(reply) // pieces)
    for n, start in enumerate(range(0, len(reply), step)):
        session.feed(reply[start:start + step])
        await asyncio.sleep(0.01)
        if between is not None:
            await between(n, session)
    return await session.finish()


def clean(api, channel, thread=THREAD):
    """Nothing left streaming, no cursor, and nothing outside the thread."""
    screen = api.screen(channel, thread)
    assert not api.still_streaming(), api.still_streaming()
    assert not any(CURSOR.strip() in text for text in screen), screen
    assert api.screen(channel) == screen, "every message is in the thread"
    return screen


@pytest.fixture
async def slack(api):
    """Slack's client, built as the gateway builds it (not receiving: these tests only send)."""
    async with runner(api) as slack:
        yield slack


async def test_a_long_reply_streams_natively_across_messages_exactly_once(api, slack):
    api.channel("D0LONG", "im")
    reply = words(1500)  # about 13,000 characters: four messages of at most 4,000
    report = await stream(slack.delivery(), "D0LONG", reply, pieces=150)
    assert report.delivered, report.error
    screen = clean(api, "D0LONG")
    assert len(screen) >= 4 and all(len(text) <= 4000 for text in screen)
    assert " ".join(screen).split() == reply.split()
    assert all(m.state == "stopped" for m in api.bot_messages("D0LONG")), "every stream was stopped"
    last = api.bot_messages("D0LONG")[-1]
    assert all(last.text.startswith(shown) for shown in last.history), "a native stream only appends"
    assert api.calls_to("chat.postMessage") == []
    # a full message may be cut back to where the core split the text: chat.update after its stream stopped
    assert all(c.params["ts"] != last.ts for c in api.calls_to("chat.update"))
    appended = [c.params["markdown_text"] for c in api.calls_to("chat.appendStream")]
    assert appended and all(CURSOR.strip() not in text for text in appended), "appends carry only new text"
    assert not api.violations


async def test_refused_native_streaming_falls_back_to_edits_exactly_once_and_is_remembered(api, slack, caplog):
    caplog.set_level(logging.INFO)
    api.channel("D0EDIT", "im")
    api.start_stream_error = "missing_scope"
    delivery = slack.delivery()
    reply = words(120)
    report = await stream(delivery, "D0EDIT", reply)
    assert report.delivered, report.error
    assert clean(api, "D0EDIT") == [reply]
    [message] = api.bot_messages("D0EDIT")
    assert len(message.history) >= 3, "previews through chat.update"
    assert len(api.calls_to("chat.startStream")) == 1 and len(api.calls_to("chat.postMessage")) == 1
    assert "native streaming is not available here (missing_scope)" in caplog.text

    second = await stream(delivery, "D0EDIT", reply, thread="1700000000.000200")
    assert second.delivered and api.screen("D0EDIT", "1700000000.000200") == [reply]
    assert len(api.calls_to("chat.startStream")) == 1, "native_streaming: auto remembers the refusal"


async def test_25_replies_in_a_minute_keep_within_20_stream_starts_the_rest_edit_exactly_once(api, slack, caplog):
    """Slack allows about 20 chat.startStream a minute per workspace (the emulator answers the 21st with 429):
    the plugin never meets that 429; replies past the limit use chat.postMessage + chat.update."""
    caplog.set_level(logging.DEBUG, logger="hermes_slack")
    chats = [f"D0BUSY{n:02d}" for n in range(25)]   # 25 people asking at once, each in their DM
    for chat in chats:
        api.channel(chat, "im")
    delivery = slack.delivery()
    replies = {chat: f"Reply {n}: " + words(60) for n, chat in enumerate(chats)}
    reports = await asyncio.gather(*(stream(delivery, chat, replies[chat], pieces=12) for chat in chats))
    assert all(r.delivered for r in reports), [r.error for r in reports if not r.delivered]
    assert all(r.rate_limited == 0 for r in reports)
    starts = api.calls_to("chat.startStream")
    assert [c.status for c in starts] == [200] * 20, "20 streams started, none answered 429"
    edited = [c.params["channel"] for c in api.calls_to("chat.postMessage")]
    assert len(edited) == 5 and set(edited).isdisjoint(c.params["channel"] for c in starts), \
        "the other 5 replies were posted and edited, each through one transport"
    assert all(api.calls_to("chat.update", chat) for chat in edited)
    for chat in chats:
        assert clean(api, chat) == [replies[chat]], chat
    assert not api.violations
    notes = [r for r in caplog.records if "chat.startStream calls in the last 60s" in r.getMessage()]
    assert len(notes) == 5 and all(r.levelno == logging.DEBUG for r in notes)


async def test_native_streaming_off_uses_post_and_update(api):
    api.channel("D0OFF", "im")
    reply = words(80)
    async with runner(api, native_streaming="off") as slack:
        report = await stream(slack.delivery(), "D0OFF", reply)
    assert report.delivered and clean(api, "D0OFF") == [reply]
    assert api.calls_to("chat.startStream") == [] and len(api.calls_to("chat.update")) >= 2


async def test_a_stream_slack_expired_is_finished_with_chat_update(api, slack, caplog):
    caplog.set_level(logging.INFO)
    api.channel("D0OLD", "im")
    reply = words(200)

    async def expire_midway(n, session):
        if n == 20:
            api.expire_streams()  # what Slack does to a stream older than about five minutes

    report = await stream(slack.delivery(), "D0OLD", reply, between=expire_midway)
    assert report.delivered, report.error
    assert clean(api, "D0OLD") == [reply]
    [message] = api.bot_messages("D0OLD")
    assert message.state == "expired" and message.text == reply
    assert api.calls_to("chat.update"), "repaired by chat.update on the stream's ts"
    assert "expired; finishing it with chat.update" in caplog.text


@pytest.mark.parametrize("shape", ["http429", "ok_false"])
@pytest.mark.parametrize("method", ["chat.startStream", "chat.appendStream", "chat.stopStream"])
async def test_both_rate_limit_answers_are_honoured_mid_stream(api, slack, shape, method):
    api.channel("D0SLOW", "im")
    api.inject_rate_limit(1, method=method, shape=shape, times=1)
    reply = words(100)
    report = await stream(slack.delivery(), "D0SLOW", reply)
    assert report.delivered, report.error
    assert report.rate_limited == 1
    assert clean(api, "D0SLOW") == [reply], "exact and once after the wait"
    limited = [c for c in api.calls_to(method) if c.answer and c.answer.get("error") in ("ratelimited", "rate_limited")]
    assert len(limited) == 1
    later = api.calls[api.calls.index(limited[0]) + 1:]
    assert later and later[0].at - limited[0].at >= 0.9, "no call into the chat before Retry-After passed"
    started = [c for c in api.calls_to("chat.startStream") if c.answer and c.answer.get("ok")]
    assert len(started) <= 1 and len(api.bot_messages("D0SLOW")) == 1, "one message, never started twice"


@pytest.mark.parametrize("shape, seconds", [("http429", 7), ("ok_false", 1)])
async def test_a_rate_limit_becomes_rate_limited_with_its_wait(api, slack, shape, seconds):
    api.channel("D0RL", "im")
    api.inject_rate_limit(seconds, method="chat.postMessage", shape=shape)
    stream_ = Stream(platform=slack.platform, chat_id="D0RL", thread_id=THREAD, chat_kind="im")
    with pytest.raises(RateLimited) as caught:
        await slack.client.on_stream_end(stream_, None, "too soon")
    assert caught.value.retry_after == seconds
    assert api.screen("D0RL") == []


async def test_editing_a_message_that_is_still_streaming_stops_it_first(api, slack):
    """A message left streaming (an earlier run crashed): chat.update answers streaming_state_conflict."""
    api.channel("D0STUCK", "im")
    first = Stream(platform=slack.platform, chat_id="D0STUCK", thread_id=THREAD, chat_kind="im",
                   settings=SETTINGS)
    ref = await slack.client.on_delta(first, None, "half a" + CURSOR)
    later = Stream(platform=slack.platform, chat_id="D0STUCK", thread_id=THREAD, chat_kind="im")
    again = await slack.client.on_stream_end(later, MessageRef("D0STUCK", ref.message_id, THREAD), "the whole answer")
    assert again.message_id == ref.message_id
    assert clean(api, "D0STUCK") == ["the whole answer"]
    assert [c.answer.get("error") for c in api.calls_to("chat.update")] == ["streaming_state_conflict", None]


async def test_a_deleted_message_is_sent_anew(api, slack):
    api.channel("D0GONE", "im")
    reply = words(120)

    async def delete_midway(n, session):
        if n == 20:
            for message in api.bot_messages("D0GONE"):
                api.delete("D0GONE", message.ts)

    report = await stream(slack.delivery(), "D0GONE", reply, between=delete_midway)
    assert report.delivered, report.error
    assert clean(api, "D0GONE") == [reply]


async def test_a_channel_the_bot_is_not_in_stops_the_reply_with_one_clear_line(api, slack, caplog):
    caplog.set_level(logging.WARNING)
    api.channel("C0PRIVATE", "channel")
    api.fail_method("chat.postMessage", "not_in_channel", times=10)
    stream_ = Stream(platform=slack.platform, chat_id="C0PRIVATE", thread_id=THREAD, chat_kind="channel")
    slack.client.events.to_incoming({"event_id": "Ev1", "team_id": "T0HERMES", "event": {
        "type": "app_mention", "channel": "C0PRIVATE", "user": "U0BOB", "text": "hi", "ts": THREAD}})
    api.start_stream_error = "not_in_channel"
    session = slack.delivery().session("slack", "C0PRIVATE", settings=SETTINGS, thread_id=THREAD,
                                           chat_kind="channel")
    session.feed("one ")
    session.feed("two ")
    session.feed("three")
    report = await session.finish()
    assert not report.delivered
    assert "not_in_channel: the bot cannot write in this channel (invite it" in report.error
    lines = [r for r in caplog.records if "not_in_channel" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert api.screen("C0PRIVATE") == [] and stream_ is not None


async def test_a_channel_stream_names_its_recipient_and_never_disappears(api, slack):
    api.channel("C0ROOM", "channel")
    slack.client.events.team_id = "T0HERMES"
    slack.client.events.to_incoming({"event_id": "Ev9", "team_id": "T0HERMES", "event": {
        "type": "app_mention", "channel": "C0ROOM", "user": "U0CAROL", "text": "hi", "ts": THREAD}})
    reply = words(90)
    report = await stream(slack.delivery(), "C0ROOM", reply, kind="channel")
    assert report.delivered and clean(api, "C0ROOM") == [reply]
    [start] = api.calls_to("chat.startStream")
    assert start.params["recipient_user_id"] == "U0CAROL" and start.params["recipient_team_id"] == "T0HERMES"

    unknown = await stream(slack.delivery(), "C0ROOM", reply, kind="channel", thread="1700000000.000999")
    assert unknown.delivered and api.screen("C0ROOM", "1700000000.000999") == [reply]
    assert len(api.calls_to("chat.startStream")) == 1, "no recipient known: edits, not a stream that vanishes"
    assert not api.violations


async def test_tool_progress_is_shown_in_previews_but_never_streamed(api, slack):
    api.channel("D0TOOL", "im")
    reply = words(100)

    async def use_a_tool(n, session):
        if n == 10:
            session.tool_started("calculate")
            await asyncio.sleep(0.1)
        if n == 14:
            session.tool_finished("calculate")

    report = await stream(slack.delivery(), "D0TOOL", reply, between=use_a_tool)
    assert report.delivered and clean(api, "D0TOOL") == [reply]
    assert not any("🔧" in c.params.get("markdown_text", "") for c in api.calls)


async def test_a_final_text_slack_finds_too_long_is_split_in_the_thread_not_lost(api, slack, caplog):
    caplog.set_level(logging.INFO)
    api.channel("D0BIG", "im")
    api.start_stream_error = "missing_scope"   # the edit transport: the final text is a chat.update
    api.update_limit = 3000                     # Slack counts some text longer than we do
    reply = words(500)                          # one message of about 3,900 characters
    report = await stream(slack.delivery(), "D0BIG", reply)
    assert report.delivered, report.error
    screen = clean(api, "D0BIG")
    assert len(screen) == 2 and all(len(t) <= 2000 for t in screen)
    assert " ".join(screen).split() == reply.split()
    assert "msg_too_long; the final text continues in 1 more message" in caplog.text


@pytest.mark.parametrize("method", ["chat.stopStream", "chat.startStream"])
async def test_a_429_while_moving_to_the_next_message_loses_nothing(api, slack, method):
    """Starting message n+1 stops message n (and may cut it back): a 429 half-way is retried to the end."""
    api.channel("D0NEXT", "im")
    api.inject_rate_limit(1, method=method, times=2)
    reply = words(900)  # about 7,800 characters: two or three messages
    report = await stream(slack.delivery(), "D0NEXT", reply, pieces=120)
    assert report.delivered, report.error
    screen = clean(api, "D0NEXT")
    assert len(screen) >= 2 and all(len(t) <= 4000 for t in screen)
    assert " ".join(screen).split() == reply.split()
    assert report.rate_limited >= 1


async def test_a_long_reply_whose_first_stream_expires_is_still_exact(api, slack):
    api.channel("D0LATE", "im")
    reply = words(900)

    async def expire_early(n, session):
        if n == 15:
            api.expire_streams()

    report = await stream(slack.delivery(), "D0LATE", reply, pieces=120, between=expire_early)
    assert report.delivered, report.error
    screen = clean(api, "D0LATE")
    assert " ".join(screen).split() == reply.split() and all(len(t) <= 4000 for t in screen)


async def test_a_message_the_core_cuts_back_is_stopped_then_edited_even_after_a_429(api, slack):
    """The core may freeze a full message at an earlier cut than what was already streamed into it."""
    api.channel("D0CUT", "im")
    stream_ = Stream(platform=slack.platform, chat_id="D0CUT", thread_id=THREAD, chat_kind="im", settings=SETTINGS)
    first = await slack.client.on_delta(stream_, None, "Hello wor" + CURSOR)
    await slack.client.on_delta(stream_, first, "Hello world, how are" + CURSOR)
    await slack.client.on_delta(stream_, first, "Hello world,")          # frozen here: not an extension
    assert api.screen("D0CUT") == ["Hello world, how are"], "nothing is appended that is not in the text"
    api.inject_rate_limit(3, method="chat.update")
    with pytest.raises(RateLimited):
        await slack.client.on_delta(stream_, None, "how are you" + CURSOR)
    second = await slack.client.on_delta(stream_, None, "how are you" + CURSOR)  # the core's retry
    await slack.client.on_stream_end(stream_, second, "how are you?")
    assert clean(api, "D0CUT") == ["Hello world,", "how are you?"]
    assert [c.method for c in api.calls if c.method.startswith("chat.")] == [
        "chat.startStream", "chat.appendStream", "chat.stopStream", "chat.update", "chat.update",
        "chat.startStream", "chat.stopStream"]
