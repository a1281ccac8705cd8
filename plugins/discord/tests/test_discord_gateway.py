"""End to end: a person writes on Discord, the gateway websocket brings it in, the demo model's reply streams back."""

from __future__ import annotations

import asyncio

import logging

import pytest

from discord_test_support import (BOT_ID, CURSOR, SECRET_PART, TOKEN, eventually, gateway_config, gateway_for,
                                  plugin_for_tests, runner_for)
from hermes_gateway import ConfigError, StartError, make_plugins
from hermes_gateway.testing import TestGateway
from hermes_discord.emulator import DiscordEmulator
from hermes_discord.emulator_files import PersonFile, pdf, photo, too_large


SENTENCE = "Every word of this reply travels from the model into the Discord channel."


async def test_the_installed_plugin_answers_a_dm_with_a_streamed_reply(api):
    """The entry point, Discord's real limits, config from platforms.discord: the whole path."""
    installed = make_plugins(builtins=())
    assert installed.platform("discord").origin == "entry point of hermes-discord"
    dm = api.dm()
    reply = f"{SENTENCE} {SENTENCE}"
    gateway = TestGateway(gateway_config(api, tokens_per_second=12), installed.platform("discord").plugin)
    async with gateway:  # about two seconds of words
        assert gateway.started_platforms == ["discord"]
        await api.push_message(dm, f"echo: {reply}")
        await eventually(lambda: api.screen(dm) == [reply], lambda: api.channel(dm).messages)
    channel = api.channel(dm)
    assert channel.typing <= 1  # typing only while nothing is shown yet (text that comes at once needs none)
    history = channel.messages[0].history
    assert history[-1] == reply and history.count(reply) == 1
    # the first send has no cursor (it shows once the store holds the message: a crash cannot leave it behind)
    assert len(history) >= 3 and not history[0].endswith(CURSOR.strip())
    assert all(p.endswith(CURSOR.strip()) for p in history[1:-1]), "it grew by edits"
    assert channel.references == {}, "a DM reply does not quote"
    assert channel.rate_limited == [] and not api.violations
    arrivals = [c.at for c in channel.calls]
    assert all(b - a >= 1.0 for a, b in zip(arrivals, arrivals[1:])), "paced: at most 4 calls in 5 s"


async def test_a_mentioned_server_message_is_answered_in_its_channel_quoting_it(loose_api):
    api = loose_api
    async with gateway_for(api):
        question = await api.push_message(api.general, "echo: hello everyone", mention=True)
        await eventually(lambda: api.screen(api.general) == ["hello everyone"], lambda: api.channel(api.general).calls)
    channel = api.channel(api.general)
    assert channel.references == {channel.messages[0].id: question}
    assert not api.violations


async def test_a_server_message_without_a_mention_gets_nothing(loose_api):
    api = loose_api
    async with gateway_for(api):
        await api.push_message(api.general, "echo: chatting among ourselves")
        await api.push_message(api.general, "echo: now for you", mention=True)
        await eventually(lambda: api.screen(api.general) != [], lambda: api.channel(api.general).calls)
    assert api.screen(api.general) == ["now for you"]


async def test_a_reply_to_the_bot_counts_as_a_mention(loose_api):
    api = loose_api
    async with gateway_for(api):
        await api.push_message(api.general, "echo: first", mention=True)
        await eventually(lambda: api.screen(api.general) == ["first"], lambda: api.channel(api.general).calls)
        bot_message = api.channel(api.general).messages[0].id
        await api.push_message(api.general, "echo: second", reply_to=bot_message)
        await eventually(lambda: len(api.screen(api.general)) == 2, lambda: api.channel(api.general).calls)
    assert api.screen(api.general) == ["first", "second"]


async def test_a_thread_message_is_answered_in_the_thread(loose_api):
    api = loose_api
    thread = api.thread(api.general, "help")
    gateway = gateway_for(api, allowed_channels=[int(api.general)])  # the parent covers its threads
    async with gateway:
        await api.push_message(thread, "echo: in the thread", mention=True)
        await eventually(lambda: api.screen(thread) == ["in the thread"], lambda: api.channel(thread).calls)
        history: list = []
        for _ in range(200):  # the turn is recorded just after its final text is on screen
            history = await gateway.history("discord", api.general, thread)
            if len(history) >= 2:
                break
            await asyncio.sleep(0.02)
    assert api.screen(api.general) == []
    assert [m["content"] for m in history] == ["echo: in the thread", "in the thread"], "one conversation per thread"


async def test_a_thread_message_reaches_the_core_as_the_thread_of_its_channel(loose_api):
    api = loose_api
    thread = api.thread(api.general, "help")
    async with runner_for(api, start=True) as runner:
        await api.push_message(thread, "echo: in the thread", mention=True)
        await eventually(lambda: runner.received != [], lambda: runner.received)
    [incoming] = runner.received
    assert (incoming.chat_id, incoming.thread_id, incoming.chat_kind, incoming.mentioned) == \
        (api.general, thread, "thread", True)
    assert incoming.bot_name == "hermes" and incoming.sender_id == "2001" and incoming.text == "echo: in the thread"


async def test_only_allowed_channels_are_answered(loose_api):
    api = loose_api
    other = api.text_channel("other")
    async with gateway_for(api, allowed_channels=[str(other)], require_mention=False):
        await api.push_message(api.general, "echo: let me in")
        await api.push_message(other, "echo: welcome")
        await eventually(lambda: api.screen(other) == ["welcome"], lambda: api.channel(other).calls)
    assert api.channel(api.general).calls == []


async def test_messages_from_bots_and_edits_are_never_answered(loose_api):
    api = loose_api
    dm = api.dm()
    async with gateway_for(api) as gateway:
        await api.push_message(dm, "echo: I am another bot", author_id="3003", bot=True)
        await api.push_message(dm, "echo: I am this bot", author_id=BOT_ID, bot=True)
        first = await api.push_message(dm, "echo: original")
        await eventually(lambda: api.screen(dm) == ["original"], lambda: api.channel(dm).calls)
        for _ in range(400):  # the turn recorded: the reply is no longer being answered (an edit then would be)
            if any(m.get("role") == "assistant" for m in await gateway.history("discord", str(dm))):
                break
            await asyncio.sleep(0.05)
        await api.push_edit(dm, first, "echo: edited")
        await api.push_message(dm, "echo: last")
        await eventually(lambda: len(api.screen(dm)) == 2, lambda: api.channel(dm).calls)
    assert api.screen(dm) == ["original", "last"]


async def test_a_photo_is_seen_by_the_model_and_dropped_messages_download_nothing():
    """Kept: the photo is downloaded once and described. Not addressed, not allowed, a redelivery after a
    resume, or over the size limit: nothing is downloaded (the CDN's log), the person still gets a line."""
    async with DiscordEmulator(TOKEN, bucket_limit=10_000, global_limit=100_000, resume_replays=5) as api:
        dm = api.dm()
        async with gateway_for(api, allowed_users=["2001"]):
            await api.push_message(api.general, "what is this?", attachments=(photo(name="unaddressed.png"),))
            await api.push_message(dm, "what is this?", attachments=(photo(name="stranger.png"),), author_id="4004")
            await api.push_message(dm, "what is this?", attachments=(photo(64, 48),))
            await eventually(lambda: len(api.screen(dm)) == 1 and CURSOR.strip() not in api.screen(dm)[0],
                             lambda: api.channel(dm).messages)
            await api.drop_connection()  # the resume replays the photo's MESSAGE_CREATE: answered once
            await eventually(lambda: api.resumes == 1, lambda: (api.identifies, api.resumes))
            await api.push_message(dm, "and this one?", attachments=(too_large(),))
            await eventually(lambda: len(api.screen(dm)) == 2 and CURSOR.strip() not in api.screen(dm)[1],
                             lambda: api.channel(dm).messages)
    assert "a PNG image of 64x48 pixels" in api.screen(dm)[0]
    assert "huge.mp4" in api.screen(dm)[1], "the too-large file gets its line"
    assert [(d.filename, d.status) for d in api.cdn.downloads] == [("photo.png", 200)]
    assert api.screen(api.general) == []


async def test_a_pdf_without_words_is_read_into_the_prompt(loose_api):
    api = loose_api
    dm = api.dm()
    async with gateway_for(api):
        await api.push_message(dm, "", attachments=(pdf("Quarterly numbers are up"),))
        await eventually(lambda: len(api.screen(dm)) == 1 and CURSOR.strip() not in api.screen(dm)[0],
                         lambda: api.channel(dm).messages)
    assert "report.pdf" in api.screen(dm)[0] and "Quarterly numbers are up" in api.screen(dm)[0]
    assert [(d.filename, d.status) for d in api.cdn.downloads] == [("report.pdf", 200)]


async def test_three_files_one_corrupt_are_answered_once_with_a_line_about_the_corrupt_one(loose_api):
    api = loose_api
    dm = api.dm()
    broken = PersonFile("broken.png", b"\x89PNG\r\n\x1a\n but not really a picture", "image/png")
    async with gateway_for(api):
        await api.push_message(dm, "what are these?", attachments=(photo(64, 48), broken, pdf("Quarterly numbers")))
        await eventually(lambda: len(api.screen(dm)) == 1 and CURSOR.strip() not in api.screen(dm)[0],
                         lambda: api.channel(dm).messages)
    [reply] = api.screen(dm)
    assert "a PNG image of 64x48 pixels" in reply and "Quarterly numbers" in reply and "broken.png" in reply
    assert sorted(d.filename for d in api.cdn.downloaded()) == ["broken.png", "photo.png", "report.pdf"]


async def test_events_replayed_after_a_resume_are_answered_once():
    async with DiscordEmulator(TOKEN, bucket_limit=10_000, resume_replays=3) as api:
        dm = api.dm()
        async with gateway_for(api):
            await api.push_message(dm, "echo: before the drop")
            await eventually(lambda: api.screen(dm) == ["before the drop"], lambda: api.channel(dm).calls)
            await api.drop_connection()
            await eventually(lambda: api.resumes == 1, lambda: (api.identifies, api.resumes))
            await api.push_message(dm, "echo: after the drop")
            await eventually(lambda: len(api.screen(dm)) == 2, lambda: api.channel(dm).calls)
        assert api.screen(dm) == ["before the drop", "after the drop"], "the replayed message was not answered again"
        assert api.identifies == 1, "discord.py resumed the session"


async def test_a_token_discord_rejects_stops_start_up_with_one_line(caplog):
    caplog.set_level(logging.DEBUG)
    other = "OTg3NjU0MzIxMDk4NzY1NDMy.GzZzZz.Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn"
    async with DiscordEmulator(other) as elsewhere:
        gateway = gateway_for(elsewhere)  # our TOKEN, a server that knows another bot
        with pytest.raises(StartError, match="platforms.discord.token: a token Discord accepts") as caught:
            async with gateway:
                pass
        assert gateway.started_platforms == [] and not gateway.accepting
    assert SECRET_PART not in str(caught.value) and SECRET_PART not in caplog.text


@pytest.mark.parametrize("section, key", [
    ({"enabled": True}, "platforms.discord.token"),
    ({"enabled": True, "token": "not-a-token-value"}, "platforms.discord.token"),
    ({"enabled": True, "token": TOKEN, "webhook": "x"}, "platforms.discord.webhook"),
    ({"enabled": True, "token": TOKEN, "allowed_channels": {"a": 1}}, "platforms.discord.allowed_channels"),
    ({"enabled": True, "token": TOKEN, "gateway_url": "http://x"}, "platforms.discord.gateway_url"),
])
async def test_a_bad_section_stops_start_up_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        async with TestGateway({"platforms": {"discord": section}}, plugin_for_tests()):
            pass
    assert str(caught.value).startswith(f"(test config): {key}: ")
    assert "\n" not in str(caught.value) and "not-a-token-value" not in str(caught.value)


async def test_a_stopped_client_hears_nothing_more_but_finishes_its_reply(loose_api):
    """stop(): the gateway websocket closes (nothing more comes in); REST stays open for replies still going out."""
    api = loose_api
    dm = api.dm()
    async with runner_for(api, start=True) as runner:
        await api.push_message(dm, "before the stop")
        await eventually(lambda: len(runner.received) == 1, lambda: runner.received)
        await runner.client.stop()
        await eventually(lambda: all(s.ws is None for s in api.sessions.values()), lambda: api.sessions)
        await api.push_message(dm, "after the stop")
        report = await runner.delivery().session("discord", dm).finish("The reply still arrives.")
    assert [i.text for i in runner.received] == ["before the stop"]
    assert report.delivered and api.screen(dm) == ["The reply still arrives."]
    assert api.identifies == 1 and api.resumes == 0, "no reconnect after the stop"


async def test_two_gateways_in_one_process_share_no_client():
    """One fresh client per gateway, each with its own URLs: two bots on two Discords, side by side."""
    async with DiscordEmulator(TOKEN, bucket_limit=10_000) as one, DiscordEmulator(TOKEN, bucket_limit=10_000) as two:
        first, second = gateway_for(one), gateway_for(two)
        async with first, second:
            assert first.client("discord") is not second.client("discord")
            dm_one, dm_two = one.dm(), two.dm()
            await one.push_message(dm_one, "echo: to the first")
            await two.push_message(dm_two, "echo: to the second")
            await eventually(lambda: one.screen(dm_one) == ["to the first"], lambda: one.channel(dm_one).calls)
            await eventually(lambda: two.screen(dm_two) == ["to the second"], lambda: two.channel(dm_two).calls)
        assert (one.identifies, two.identifies) == (1, 1), "each gateway connected to its own Discord"
        restarted = first.client("discord")
        async with first:
            assert first.client("discord") is not restarted, "a restarted gateway builds its client anew"
            await one.push_message(dm_one, "echo: again")
            await eventually(lambda: one.screen(dm_one) == ["to the first", "again"], lambda: one.channel(dm_one).calls)
        assert two.screen(dm_two) == ["to the second"], "nothing of the first gateway's went to the second Discord"
