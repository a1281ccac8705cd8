"""End to end over Socket Mode: a person writes, bolt receives the envelope, the demo model's reply streams
into the thread. What is asserted is the thread as a person sees it, and the acks Slack sees."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from hermes_gateway import ConfigError, StartError, make_plugins
from hermes_gateway.testing import TestGateway
from hermes_slack.emulator import SlackEmulator
from hermes_slack import plugin
from slack_test_support import CURSOR, SECRETS, config, eventually, gateway

SENTENCE = "Every word of this reply travels from the model into the Slack thread."


def settled(api, channel, thread):
    """The thread shows something and nothing is still streaming or carrying a cursor."""
    screen = api.screen(channel, thread)
    return bool(screen) and not api.still_streaming() and not any(CURSOR.strip() in t for t in screen)


async def test_a_dm_is_answered_in_its_thread_by_native_streaming_exactly_once(api):
    reply = " ".join([SENTENCE] * 6)
    async with gateway(api, tokens_per_second=150):
        await api.wait_connected()
        ts = await api.push_message("D0DM", f"echo: {reply}", kind="im")
        await eventually(lambda: settled(api, "D0DM", ts), lambda: api.screen("D0DM"))
    assert api.screen("D0DM", ts) == [reply]
    assert api.screen("D0DM") == [reply], "nothing outside the thread"
    [message] = api.bot_messages("D0DM")
    assert message.state == "stopped" and message.thread_ts == ts
    assert len(message.history) >= 3, "the reply grew on screen while the model wrote it"
    assert all(reply.startswith(shown) for shown in message.history), "a native stream only ever appends"
    methods = [c.method for c in api.calls if c.method.startswith("chat.")]
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"
    assert "chat.postMessage" not in methods and "chat.update" not in methods
    assert not api.violations


async def test_an_app_mention_in_a_channel_is_answered_in_its_thread_for_that_person(api):
    async with gateway(api, tokens_per_second=100):
        await api.wait_connected()
        ts = await api.push_message("C0GENERAL", f"<@U0BOT> echo: {SENTENCE}", kind="channel", user="U0BOB")
        await eventually(lambda: settled(api, "C0GENERAL", ts), lambda: api.screen("C0GENERAL"))
        await eventually(lambda: len(api.deliveries) >= 3 and all(d.acked_at for d in api.deliveries),
                         lambda: api.deliveries)  # the bot's own echo (of chat.stopStream) too
    assert api.screen("C0GENERAL", ts) == [SENTENCE], "one reply although Slack sent message and app_mention"
    [start] = api.calls_to("chat.startStream")
    assert (start.params["recipient_user_id"], start.params["recipient_team_id"]) == ("U0BOB", "T0HERMES")
    events = [d.event_id for d in api.deliveries]
    assert len(events) >= 2 and all(api.acked(e) for e in events), "every event is acknowledged, echoes too"
    assert not api.violations


async def test_in_a_channel_only_mentions_and_the_bots_threads_are_answered(api):
    async with gateway(api):
        await api.wait_connected()
        chatter = await api.push_message("C0TEAM", "echo: just talking among ourselves", kind="channel")
        asked = await api.push_message("C0TEAM", "<@U0BOT> echo: first answer", kind="channel")
        await eventually(lambda: settled(api, "C0TEAM", asked), lambda: api.screen("C0TEAM"))
        await api.push_message("C0TEAM", "echo: second answer", kind="channel", thread_ts=asked)
        await eventually(lambda: len(api.screen("C0TEAM", asked)) == 2 and settled(api, "C0TEAM", asked),
                         lambda: api.screen("C0TEAM"))
        await asyncio.sleep(0.2)
    assert api.screen("C0TEAM", chatter) == []
    assert api.screen("C0TEAM", asked) == ["first answer", "second answer"], "a thread the bot is part of"


async def test_after_a_restart_a_follow_up_in_the_bots_old_thread_is_answered_without_a_mention(api, caplog, tmp_path):
    caplog.set_level(logging.WARNING)
    store = {"path": str(tmp_path / "state.db")}
    async with gateway(api, store=store):
        await api.wait_connected()
        asked = await api.push_message("C0KEEP", "<@U0BOT> echo: before the restart", kind="channel")
        chatter = await api.push_message("C0KEEP", "echo: people talking", kind="channel")
        await eventually(lambda: settled(api, "C0KEEP", asked), lambda: api.screen("C0KEEP"))
    assert Path(store["path"]).is_file(), "the store is a file that outlives the gateway"

    async with gateway(api, store=store):   # a new process: a new client, nothing remembered but the store
        await api.wait_connected(count=2)
        await api.push_message("C0KEEP", "echo: not for the bot", kind="channel", thread_ts=chatter)
        await api.push_message("C0KEEP", "echo: after the restart", kind="channel", thread_ts=asked)
        await eventually(lambda: len(api.screen("C0KEEP", asked)) == 2 and settled(api, "C0KEEP", asked),
                         lambda: api.screen("C0KEEP"))
        await api.push_message("C0KEEP", "echo: and once more", kind="channel", thread_ts=asked)
        await eventually(lambda: len(api.screen("C0KEEP", asked)) == 3 and settled(api, "C0KEEP", asked),
                         lambda: api.screen("C0KEEP"))
        await asyncio.sleep(0.2)
    assert api.screen("C0KEEP", asked) == ["before the restart", "after the restart", "and once more"]
    assert api.screen("C0KEEP", chatter) == [], "a thread the bot never replied in still needs a mention"
    assert "conversation store" not in caplog.text


async def test_edits_joins_deletions_and_other_bots_get_no_reply_but_are_acknowledged(api):
    async with gateway(api):
        await api.wait_connected()
        ids = [
            await api.push_event({"type": "message", "subtype": "message_changed", "channel": "D0QUIET",
                                  "channel_type": "im", "ts": "1.1", "message": {"text": "echo: edited"}}),
            await api.push_event({"type": "message", "subtype": "channel_join", "channel": "D0QUIET",
                                  "user": "U0ALICE", "text": "joined", "ts": "1.2", "channel_type": "im"}),
            await api.push_event({"type": "message", "channel": "D0QUIET", "user": "U0OTHER", "bot_id": "B0OTHER",
                                  "text": "echo: from another bot", "ts": "1.3", "channel_type": "im"}),
            await api.push_event({"type": "reaction_added", "user": "U0ALICE", "reaction": "wave",
                                  "item": {"type": "message", "channel": "D0QUIET", "ts": "1.1"}}),
        ]
        for event_id in ids:
            await api.wait_acked(event_id)
        ts = await api.push_message("D0QUIET", "echo: now answer", kind="im")
        await eventually(lambda: settled(api, "D0QUIET", ts), lambda: api.screen("D0QUIET"))
    assert api.screen("D0QUIET") == ["now answer"]


async def test_a_redelivered_event_gets_no_second_reply(api):
    async with gateway(api):
        await api.wait_connected()
        ts = await api.push_message("D0AGAIN", "echo: only once", kind="im")
        await eventually(lambda: settled(api, "D0AGAIN", ts), lambda: api.screen("D0AGAIN"))
        [first] = [d.event_id for d in api.deliveries if api._payloads[d.event_id]["event"].get("ts") == ts]
        await api.redeliver(first)
        await api.wait_acked(first)
        await asyncio.sleep(0.3)
    redelivered = [d for d in api.deliveries if d.event_id == first]
    assert [d.attempt for d in redelivered] == [0, 1] and len({d.envelope_id for d in redelivered}) == 2
    assert all(d.acked_at is not None for d in redelivered)
    assert api.screen("D0AGAIN") == ["only once"]


async def test_the_envelope_is_acknowledged_before_the_model_answers(api):
    """A slow model (about 3 words a second) must not hold up the ack, or Slack redelivers after 3 s."""
    reply = "one two three four five six seven eight nine ten"
    async with gateway(api, tokens_per_second=3):
        await api.wait_connected()
        ts = await api.push_message("D0SLOW", f"echo: {reply}", kind="im")
        [delivery] = [d for d in api.deliveries if api._payloads[d.event_id]["event"].get("ts") == ts]
        await api.wait_acked(delivery.event_id)
        assert api.screen("D0SLOW", ts) != [reply], "acknowledged while the reply is still being written"
        await eventually(lambda: settled(api, "D0SLOW", ts), lambda: api.screen("D0SLOW"))
    assert api.screen("D0SLOW", ts) == [reply]
    assert [d.attempt for d in api.deliveries if d.event_id == delivery.event_id] == [0], "no redelivery"


async def test_a_disconnect_message_makes_it_reconnect_and_carry_on(api):
    async with gateway(api):
        await api.wait_connected()
        await api.send_disconnect()
        await api.wait_connected(count=2)
        ts = await api.push_message("D0BACK", "echo: still here", kind="im")
        await eventually(lambda: settled(api, "D0BACK", ts), lambda: api.screen("D0BACK"))
    assert api.connections == 2
    assert len(api.calls_to("apps.connections.open")) == 2
    assert api.screen("D0BACK") == ["still here"]


async def test_the_installed_plugin_is_found_by_its_entry_point(api):
    plugins = make_plugins(builtins=())
    registered = plugins.platform("slack")
    assert registered.origin == "entry point of hermes-slack"
    assert registered.platform.max_message_length == 4000

    async with TestGateway(config(api), registered.plugin, shutdown_grace=0.5) as running:
        assert "slack" in running.started_platforms
        await api.wait_connected()
        ts = await api.push_message("D0REAL", "echo: through the entry point", kind="im")
        await eventually(lambda: settled(api, "D0REAL", ts), lambda: api.screen("D0REAL"), timeout=30)
    assert api.screen("D0REAL") == ["through the entry point"]


async def test_only_allowed_users_are_answered(api):
    async with gateway(api, allowed_users=["U0ALICE"]):
        await api.wait_connected()
        await api.push_message("D0MALLORY", "echo: let me in", kind="im", user="U0MALLORY")
        ts = await api.push_message("D0ALICE", "echo: welcome", kind="im", user="U0ALICE")
        await eventually(lambda: settled(api, "D0ALICE", ts), lambda: api.screen("D0ALICE"))
    assert api.screen("D0MALLORY") == [] and api.calls_to("chat.startStream", "D0MALLORY") == []


async def test_tokens_slack_rejects_stop_start_up_with_one_line(caplog):
    caplog.set_level(logging.DEBUG)
    async with SlackEmulator(bot_token="xoxb-9999999999-other-bot-entirely") as elsewhere:
        with pytest.raises(StartError, match="platforms.slack.bot_token: a bot token Slack accepts") as caught:
            async with gateway(elsewhere):
                pass
    async with SlackEmulator(app_token="xapp-1-A0OTHER-0000000-other-app-token") as elsewhere:
        with pytest.raises(StartError, match="platforms.slack.app_token") as caught_app:
            async with gateway(elsewhere):
                pass
    for secret in SECRETS:
        assert secret not in str(caught.value) + str(caught_app.value)
        assert secret not in caplog.text


@pytest.mark.parametrize("section, key", [
    ({"enabled": True}, "platforms.slack.bot_token"),
    ({"enabled": True, "bot_token": "not-a-token-value"}, "platforms.slack.bot_token"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222"}, "platforms.slack.app_token"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222", "mode": "http"}, "platforms.slack.signing_secret"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222", "mode": "webhook"}, "platforms.slack.mode"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222", "app_token": "xapp-1-A-12345678",
      "native_streaming": "always"}, "platforms.slack.native_streaming"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222", "app_token": "xapp-1-A-12345678",
      "channels": ["C1"]}, "platforms.slack.channels"),
    ({"enabled": True, "bot_token": "xoxb-1111111111-22222", "app_token": "xapp-1-A-12345678",
      "allowed_users": {"a": 1}}, "platforms.slack.allowed_users"),
])
async def test_a_bad_section_stops_start_up_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        async with TestGateway({"platforms": {"slack": section}}, plugin):
            pass
    assert str(caught.value).startswith(f"(test config): {key}: ")
    assert "\n" not in str(caught.value) and "not-a-token-value" not in str(caught.value)


async def test_a_disabled_platform_is_left_alone(api):
    async with TestGateway({"platforms": {"slack": {"enabled": False, "bot_token": "whatever"}}},
                           plugin) as running:
        assert running.started_platforms == [] and running.url is None and running.client("slack") is None
    assert api.calls == []


async def test_a_broken_connection_is_reopened_by_the_client(api):
    async with gateway(api):
        await api.wait_connected()
        await api.drop_connection()
        await api.wait_connected(count=2, timeout=30)
        ts = await api.push_message("D0BLIP", "echo: after the blip", kind="im")
        await eventually(lambda: settled(api, "D0BLIP", ts), lambda: api.screen("D0BLIP"))
    assert api.screen("D0BLIP") == ["after the blip"]


async def test_a_long_reply_in_a_channel_thread_is_exact_once_natively(api):
    reply = " ".join([SENTENCE] * 90)  # about 6,500 characters: two messages
    async with gateway(api, tokens_per_second=2000):
        await api.wait_connected()
        ts = await api.push_message("C0LONG", f"<@U0BOT> echo: {reply}", kind="channel", user="U0ERIN")
        await eventually(lambda: len(api.screen("C0LONG", ts)) == 2 and settled(api, "C0LONG", ts),
                         lambda: api.screen("C0LONG"))
        await asyncio.sleep(0.2)
    screen = api.screen("C0LONG", ts)
    assert " ".join(screen).split() == reply.split() and all(len(t) <= 4000 for t in screen)
    assert api.screen("C0LONG") == screen, "all of it in the thread"
    assert len(api.calls_to("chat.startStream")) == 2 and api.calls_to("chat.postMessage") == []
    assert all(m.state == "stopped" for m in api.bot_messages("C0LONG"))
    assert not api.violations


async def test_a_deleted_file_without_words_is_answered_with_a_notice_in_its_thread(api):
    async with gateway(api):
        await api.wait_connected()
        api.channel("D0FILE", "im")
        await api.push_event({"type": "message", "subtype": "file_share", "channel": "D0FILE", "user": "U0ALICE",
                              "text": "", "ts": "1800000999.000001", "channel_type": "im",
                              "files": [{"id": "F0PHOTO", "mode": "tombstone"}]})
        await eventually(lambda: api.screen("D0FILE", "1800000999.000001") != [], lambda: api.screen("D0FILE"))
    [notice] = api.screen("D0FILE", "1800000999.000001")
    assert "can't open that file" in notice


async def each_answered_at_once(api, count: int) -> None:
    """``count`` people write to the bot in the same moment, each in a DM; each is answered in their thread."""
    people = [f"D{i:03d}" for i in range(count)]
    stamps = await asyncio.gather(*(api.push_message(dm, f"echo: hello {dm}", kind="im", user=f"U{dm}")
                                    for dm in people))
    await eventually(lambda: all(api.screen(dm, ts) == [f"hello {dm}"] for dm, ts in zip(people, stamps)),
                     lambda: [api.screen(dm) for dm in people])


async def test_a_burst_of_messages_at_start_costs_no_auth_test_beyond_the_first_and_each_is_answered(api):
    """bolt authorizes each event with ``auth.test`` and caches the answer only once it has one: forty messages
    at once made forty calls to a method Slack limits, and an event whose call was refused was acknowledged and
    dropped (bolt answers its own "authorization failed" with 200). The start-up's answer serves them all."""
    api.limit("auth.test", per_minute=60, burst=2)  # Slack's own limit is higher, but far below a busy start
    async with gateway(api, tokens_per_second=300):
        await api.wait_connected()
        await each_answered_at_once(api, 40)
    assert len(api.calls_to("auth.test")) == 1, "the start-up's, which says who the bot is"
    assert not api.violations


async def test_when_auth_test_failed_at_start_the_first_event_asks_once_for_all_and_learns_who_the_bot_is(api):
    api.fail_method("auth.test", "internal_error")  # start-up carries on without knowing who the bot is
    api.limit("auth.test", per_minute=60, burst=2)
    async with gateway(api, tokens_per_second=300):
        await api.wait_connected()
        await each_answered_at_once(api, 20)
        ts = await api.push_message("C0GENERAL", "<@U0BOT> echo: now I know my name", kind="channel")
        await eventually(lambda: api.screen("C0GENERAL", ts) == ["now I know my name"],
                         lambda: api.screen("C0GENERAL"))
    assert len(api.calls_to("auth.test")) == 2, "the start-up's (refused) and the first event's"
    assert not api.violations
