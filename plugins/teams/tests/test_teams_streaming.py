"""Replies through a whole gateway (the demo model) into Teams, as a person sees them on the emulator.

With Teams' real pacing (the platform's own budgets, the emulator's real
windows and its one-request-a-second stream rule): a personal chat's reply
streams natively and ends as one message; a channel's streams by updating
one message, with no 429. Mention gating in a group chat, and the
two-minute stream cap (shortened on the emulator) ending in an update.
"""

from __future__ import annotations

from hermes_teams.emulator import TeamsEmulator
from teams_test_support import FAST_STREAM, FAST_WINDOWS, connect, eventually, gateway

WORDS = " ".join(f"word{i}" for i in range(45))


def done(api: TeamsEmulator, chat: str, text: str) -> bool:
    return api.screen(chat) == [text] and not api.still_streaming()


async def test_a_personal_chat_reply_streams_natively_and_ends_as_one_message():
    async with TeamsEmulator() as api, gateway(api, limits=None, tokens_per_second=8) as gw:
        connect(api, gw.url)
        await api.send("a:personal", f"echo: {WORDS}")
        await eventually(lambda: done(api, "a:personal", WORDS), lambda: api.screen("a:personal"), timeout=30)
        [message] = api.messages("a:personal")
        assert message.stream == "final" and message.updates >= 1, "started, continued, then final"
        assert api.violations == [] and api.throttled == 0
        assert api.token_requests == 1, "the bot's token is fetched once and reused"


async def test_a_channel_reply_streams_by_updates_with_no_429():
    chat = "19:general@thread.tacv2;messageid=1700000000000"
    async with TeamsEmulator() as api, gateway(api, limits=None, tokens_per_second=15) as gw:
        api.conversation(chat, "channel")
        connect(api, gw.url)
        await api.send(chat, f"echo: {WORDS}", kind="channel")
        await eventually(lambda: done(api, chat, WORDS), lambda: api.screen(chat), timeout=30)
        [message] = api.messages(chat)
        assert message.stream == "" and message.updates >= 1, "posted once, then updated in place"
        assert api.violations == [] and api.throttled == 0


async def test_a_group_chat_answers_only_when_the_bot_is_mentioned():
    chat = "19:groupchat@thread.v2"
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS) as api, gateway(api) as gw:
        connect(api, gw.url)
        await api.send(chat, "echo: not for you", kind="groupChat", mention=False)
        await api.send(chat, "echo: for you", kind="groupChat")
        await eventually(lambda: done(api, chat, "for you"), lambda: api.screen(chat))
        assert api.violations == []


async def test_a_stream_past_teams_time_cap_ends_by_updating_the_message():
    """Teams ends a stream after two minutes (0.6 s here): the rest of the reply arrives by one update."""
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS, stream_cap=0.6) as api, \
            gateway(api, tokens_per_second=30) as gw:
        connect(api, gw.url)
        reply = f"{WORDS} {WORDS}"   # about 3 s of the demo model: well past the cap however slow the machine
        await api.send("a:slow", f"echo: {reply}")
        await eventually(lambda: done(api, "a:slow", reply), lambda: api.screen("a:slow"), timeout=30)
        [message] = api.messages("a:slow")
        assert message.stream == "timed_out" and message.updates >= 1
        assert api.violations == []


async def test_a_redelivered_activity_is_answered_once_and_a_stopping_gateway_answers_503():
    """The Bot Framework redelivers an activity it got no answer for: same id, one reply. While the gateway
    stops, the endpoint answers 503 so the activity comes again rather than being lost."""
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS) as api, gateway(api) as gw:
        connect(api, gw.url)
        activity = api.activity("a:twice", "echo: only once")
        assert (await api.post(activity))[0] == 200
        assert (await api.post(activity))[0] == 200
        await eventually(lambda: done(api, "a:twice", "only once"), lambda: api.screen("a:twice"))
        gw.accepting = False
        status, _ = await api.post(api.activity("a:twice", "echo: while stopping"))
        assert status == 503
    assert api.screen("a:twice") == ["only once"]


async def test_a_reply_streaming_when_the_gateway_stops_is_finished_not_left_streaming():
    api = TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS)
    async with api:
        async with gateway(api, tokens_per_second=20) as gw:
            connect(api, gw.url)
            await api.send("a:stop", f"echo: {WORDS}")
            await eventually(lambda: bool(api.still_streaming()), lambda: api.screen("a:stop"))
        assert not api.still_streaming()
        [message] = api.messages("a:stop")
        assert message.stream == "final" and message.text.startswith("word0")
        assert api.violations == []


async def test_a_reply_goes_to_the_service_url_of_the_persons_activity():
    """Teams names the region to answer in each activity (serviceUrl); the configured one is only a fallback."""
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS) as api, \
            gateway(api, service_url="http://127.0.0.1:9/nowhere/") as gw:
        connect(api, gw.url)
        await api.send("a:region", "echo: answered where asked")
        await eventually(lambda: done(api, "a:region", "answered where asked"), lambda: api.screen("a:region"))
