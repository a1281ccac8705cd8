"""End to end: a person writes to the bot, getUpdates brings it in, the demo model's reply streams back."""

from __future__ import annotations

import asyncio
import logging

import pytest

import hermes_telegram
from hermes_gateway import ConfigError, StartError, make_plugins
from hermes_gateway.testing import TestGateway
from hermes_telegram import TelegramClient, plugin, polling
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import CURSOR, FAST_LIMITS, TOKEN, config, eventually, gateway_for, spy_on_receive


def fast_gateway(api, **cfg):
    """The gateway with Telegram's wire behaviour and no pacing worth waiting for."""
    return gateway_for(api.base_url, **cfg)


SENTENCE = "Every word of this reply travels from the model into the Telegram chat."


async def test_the_installed_plugin_answers_a_message_with_a_streamed_reply(api):
    """The entry point, Telegram's real limits, config from platforms.telegram: the whole path."""
    registered = make_plugins(builtins=()).platform("telegram")  # what `hermes-gateway run` loads
    assert registered.origin == "entry point of hermes-telegram" and registered.plugin is hermes_telegram.plugin
    reply = f"{SENTENCE} {SENTENCE}"
    async with TestGateway(config(api.base_url, tokens_per_second=12), registered.plugin) as gateway:  # ~2 s of words
        assert gateway.started_platforms == ["telegram"]
        await api.push_message(42, f"echo: {reply}")
        await eventually(lambda: api.screen(42) == [reply], lambda: api.chat(42).messages)
    chat = api.chat(42)
    assert chat.actions.count("typing") <= 1  # typing only while nothing is shown yet
    history = chat.messages[0].history
    assert history[-1] == reply
    # the first send has no cursor (it shows once the store holds the message: a crash cannot leave it behind)
    assert len(history) >= 3 and reply.startswith(history[0]) and not history[0].endswith(CURSOR.strip())
    assert all(p.endswith(CURSOR.strip()) and reply.startswith(p[:-2]) for p in history[1:-1])
    assert not chat.violations
    arrivals = [c.at for c in chat.calls]
    # The core spaces its calls a second apart when it sends them; arrival times carry network jitter
    # (the first call also opens the connection), hence the margin. Unpaced calls would be ms apart.
    assert all(b - a >= 0.75 for a, b in zip(arrivals, arrivals[1:])), "private chat: about one call a second"


async def test_a_slow_reply_does_not_hold_up_another_chat_and_stop_finalises_it(api):
    gateway = fast_gateway(api, tokens_per_second=30)
    long_text = " ".join(f"w{i}" for i in range(600))
    async with gateway:
        await api.push_message(1, f"echo: {long_text}")
        await eventually(lambda: api.screen(1) != [], lambda: api.chat(1).calls)
        await api.push_message(2, "echo: quick answer")
        await eventually(lambda: api.screen(2) == ["quick answer"], lambda: api.chat(2).messages)
        assert api.screen(1)[0].endswith(CURSOR.strip()), "chat 1 is still streaming while chat 2 got its answer"
    # stopping cancelled the long reply after the grace period: it keeps what was shown, without cursor
    [shown] = api.screen(1)
    assert not shown.endswith(CURSOR.strip()) and long_text.startswith(shown) and shown != long_text


async def test_messages_in_one_chat_are_answered_in_order_once_each(api):
    """The core's queue policy: what arrives during a reply is answered together, after it, once."""
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(5, "echo: first")
        await api.push_message(5, "echo: second")
        await api.push_message(5, "echo: third")
        await eventually(lambda: "third" in "".join(api.screen(5)) and CURSOR.strip() not in "".join(api.screen(5)),
                         lambda: api.screen(5))
    shown = "\n\n".join(api.screen(5))
    assert [shown.count(word) for word in ("first", "second", "third")] == [1, 1, 1]
    assert shown.index("first") < shown.index("second") < shown.index("third")


async def test_group_topics_and_chat_kinds_reach_the_core(api):
    gateway = fast_gateway(api)
    async with gateway:
        seen, _ = spy_on_receive(gateway)
        await api.push_message(-1001, "@hermes_test_bot echo: in the topic", chat_type="supergroup", thread_id=12)
        await eventually(lambda: api.chat(-1001).screen_in_thread("12") != [], lambda: api.chat(-1001).messages)
    [incoming] = seen
    assert (incoming.platform, incoming.chat_id, incoming.thread_id, incoming.chat_kind, incoming.mentioned) == \
        ("telegram", "-1001", "12", "supergroup", True)
    assert incoming.bot_name == "hermes_test_bot" and incoming.sender_id == "1001"
    [(question, _)] = api.chat(-1001).said
    answer = api.chat(-1001).messages[0]
    assert api.chat(-1001).quotes == {answer.id: question}, "in a group the reply quotes the question"
    assert int(answer.id) == question + 1, "message ids run on per chat, people's and the bot's alike"


async def test_in_a_group_only_messages_for_the_bot_are_answered(api):
    """Mentioned by @name, or a /command (not one addressed to another bot): the core's require_mention."""
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(-2002, "echo: chatting among ourselves", chat_type="group")
        await api.push_message(-2002, "/help@other_bot", chat_type="group")
        await api.push_message(-2002, "/help@hermes_test_bot", chat_type="group")
        await eventually(lambda: api.screen(-2002) != [], lambda: api.chat(-2002).messages)
        await api.push_message(-2002, "echo: hi @hermes_test_bot", chat_type="group")
        await eventually(lambda: len(api.screen(-2002)) == 2, lambda: api.chat(-2002).messages)
    help_text, answer = api.screen(-2002)
    assert help_text.startswith("Commands:") and "/new" in help_text and "/stop" in help_text
    assert answer == "hi @hermes_test_bot"


async def test_in_a_group_a_reply_to_the_bot_is_answered_and_a_reply_to_someone_else_is_not(api):
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(-2003, "echo: first answer @hermes_test_bot", chat_type="group")
        await eventually(lambda: api.screen(-2003) == ["first answer @hermes_test_bot"],
                         lambda: api.chat(-2003).messages)
        bot_message = api.chat(-2003).messages[0].id
        person_message = api.chat(-2003).said[0][0]
        await api.push_message(-2003, "echo: not for the bot", chat_type="group", reply_to=person_message)
        await api.push_message(-2003, "echo: a reply to the bot", chat_type="group", reply_to=bot_message)
        await eventually(lambda: len(api.screen(-2003)) == 2, lambda: api.chat(-2003).messages)
    assert api.screen(-2003) == ["first answer @hermes_test_bot", "a reply to the bot"]


async def test_a_private_reply_does_not_quote(api):
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(8, "echo: just us")
        await eventually(lambda: api.screen(8) == ["just us"], lambda: api.chat(8).messages)
    assert api.chat(8).quotes == {}


async def test_only_allowed_chats_are_answered(api):
    gateway = fast_gateway(api, allowed_chats=[7, "-100555"])
    async with gateway:
        await api.push_message(666, "echo: let me in")
        await api.push_message(7, "echo: welcome")
        await eventually(lambda: api.screen(7) == ["welcome"], lambda: api.chat(7).messages)
    assert api.screen(666) == [] and api.chat(666).calls == []


async def test_polling_survives_server_errors(api, monkeypatch):
    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.05)
    api.fail_method("getUpdates", 502, "Bad Gateway", times=2)
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(3, "echo: still here")
        await eventually(lambda: api.screen(3) == ["still here"], lambda: api.chat(3).messages)


async def test_stop_ends_polling_and_confirms_what_was_received(api):
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(4, "echo: once")
        await eventually(lambda: api.screen(4) == ["once"], lambda: api.chat(4).messages)
        client = gateway.client("telegram")
        poller = client._poller
    assert client._poller is None and poller._task is None and client._bot is None, "stopped, then closed"
    assert api.pending_updates == 0, "a restart will not answer the same message twice"
    polls = sum(1 for method, _ in api.requests if method == "getUpdates")
    await asyncio.sleep(0.2)
    assert sum(1 for method, _ in api.requests if method == "getUpdates") == polls, "no polling after stop"


async def test_a_token_telegram_rejects_stops_start_up_with_one_line(api, caplog):
    caplog.set_level(logging.DEBUG)
    other = "987654321:" + "Z" * 35
    async with BotApiEmulator(other) as elsewhere:
        gateway = fast_gateway(elsewhere)  # our TOKEN, a server that knows another bot
        with pytest.raises(StartError, match="platforms.telegram.token: a token Telegram accepts") as caught:
            async with gateway:
                pass
    assert TOKEN.split(":")[1].lower() not in str(caught.value).lower()
    assert TOKEN.split(":")[1].lower() not in caplog.text.lower()


@pytest.mark.parametrize("section, key", [
    ({"enabled": True}, "platforms.telegram.token"),
    ({"enabled": True, "token": "not-a-token-value"}, "platforms.telegram.token"),
    ({"enabled": True, "token": TOKEN, "webhook": "x"}, "platforms.telegram.webhook"),
    ({"enabled": True, "token": TOKEN, "allowed_chats": {"a": 1}}, "platforms.telegram.allowed_chats"),
    ({"enabled": True, "token": TOKEN, "base_url": "ftp://x"}, "platforms.telegram.base_url"),
])
async def test_a_bad_section_stops_start_up_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        async with TestGateway({"platforms": {"telegram": section}}, plugin):
            pass
    assert str(caught.value).startswith(f"(test config): {key}: ")
    assert "\n" not in str(caught.value) and "not-a-token-value" not in str(caught.value)


async def test_a_disabled_platform_is_left_alone(api):
    async with TestGateway({"platforms": {"telegram": {"enabled": False, "token": "whatever"}}}, plugin) as gateway:
        assert gateway.started_platforms == [] and gateway.client("telegram") is None
    assert api.requests == []


async def test_a_restarted_gateway_uses_the_new_settings(api):
    async with BotApiEmulator(TOKEN) as moved:
        for server in (api, moved):  # each gateway keeps its own in-memory store: not one bot's history
            async with fast_gateway(server):
                await server.push_message(6, "echo: here")
                await eventually(lambda server=server: server.screen(6) == ["here"], lambda server=server: server.chat(6).messages)
    assert api.screen(6) == ["here"] and moved.screen(6) == ["here"]


async def test_two_gateways_in_one_process_get_two_clients_that_share_nothing(api):
    """One plugin object, two gateways at once, each on its own Telegram: two clients, two bots, no crossed wires."""
    async with BotApiEmulator(TOKEN) as other:
        async with fast_gateway(api) as first, fast_gateway(other) as second:
            one, two = first.client("telegram"), second.client("telegram")
            assert isinstance(one, TelegramClient) and isinstance(two, TelegramClient) and one is not two
            assert one.bot is not two.bot and one.settings.base_url != two.settings.base_url
            assert one.context is not two.context and one.migrated is not two.migrated
            await api.push_message(21, "echo: to the first")
            await other.push_message(21, "echo: to the second")
            await eventually(lambda: api.screen(21) == ["to the first"], lambda: api.chat(21).messages)
            await eventually(lambda: other.screen(21) == ["to the second"], lambda: other.chat(21).messages)
            assert await first.history("telegram", "21") != await second.history("telegram", "21")
        assert one._bot is None and two._bot is None, "each gateway closed its own bot"
    assert api.screen(21) == ["to the first"] and other.screen(21) == ["to the second"]


async def test_polling_waits_out_flood_control(api):
    import time

    api.fail_method("getUpdates", 429, "Too Many Requests: retry after 1", parameters={"retry_after": 1})
    started = time.monotonic()
    gateway = fast_gateway(api)
    async with gateway:
        await api.push_message(9, "echo: after the wait")
        await eventually(lambda: api.screen(9) == ["after the wait"], lambda: api.chat(9).messages)
    assert time.monotonic() - started >= 1.0, "the next getUpdates came only after retry_after"


async def test_with_streaming_off_typing_is_refreshed_until_the_reply_comes(api):
    """Telegram drops "typing…" after ~5 s: a slow reply keeps it up (the core's typing_interval)."""
    cfg = {
        "model": {"demo": {"tokens_per_second": 8}},  # ~3 s of words
        "streaming": {"telegram": {"enabled": False}},
        "conversation": {"typing_interval": 0.5},
        "platforms": {"telegram": {"enabled": True, "token": TOKEN, "base_url": api.base_url, "poll_timeout": 5}},
    }
    reply = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    async with TestGateway(cfg, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
        await api.push_message(15, f"echo: {reply}")
        await eventually(lambda: api.screen(15) == [reply], lambda: api.chat(15).messages)
    methods = [c.method for c in api.chat(15).calls]
    assert methods.count("sendChatAction") >= 3, methods
    assert methods[-1] == "sendMessage" and methods.count("sendMessage") == 1
