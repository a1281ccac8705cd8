"""Webhook mode: Telegram (the emulator) posts updates to the gateway's listener; the reply follows in the chat."""

from __future__ import annotations

import asyncio
import logging
import socket

import aiohttp
import pytest

from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, SECRET_HALF, TOKEN, eventually, spy_on_receive

SECRET = "s3cret-Webhook_token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpiedGateway(TestGateway):
    """A gateway that records what its Telegram client hands the core (``seen``) and the reply futures."""

    seen: list
    replies: list

    async def start(self):
        await super().start()
        self.seen, self.replies = spy_on_receive(self)  # what the webhook handler and the poller hand over


def gateway_for(api, *, mode="webhook", port=None, **telegram):
    """A gateway whose Telegram platform receives by webhook on 127.0.0.1:port (or polls).

    The port is chosen up front: Telegram must be told the webhook's URL, which names it.
    """
    port = port or free_port()
    section = {"enabled": True, "token": TOKEN, "base_url": api.base_url, "poll_timeout": 2, **telegram}
    if mode == "webhook":
        section.update(mode="webhook", webhook_url=f"http://127.0.0.1:{port}/webhooks/telegram",
                       webhook_secret=SECRET)
    cfg = {
        "model": {"demo": {"tokens_per_second": 300}},
        "streaming": {"telegram": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"telegram": section},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": port},
    }
    gateway = SpiedGateway(cfg, plugin, limits=FAST_LIMITS, shutdown_grace=0.5)
    return gateway


async def test_a_message_posted_to_the_webhook_is_answered_in_the_chat(api):
    gateway = gateway_for(api)
    async with gateway:
        assert api.webhook is not None and api.webhook["secret_token"] == SECRET
        assert api.webhook["url"].startswith("http://127.0.0.1:"), "an http:// URL is accepted"
        await api.push_message(42, "echo: delivered by webhook")
        await eventually(lambda: api.screen(42) == ["delivered by webhook"], lambda: api.chat(42).messages)
    assert [status for _, status in api.webhook_deliveries] == [200]
    assert not any(method == "getUpdates" for method, _ in api.requests), "a webhook bot never polls"
    assert gateway.seen[0].chat_id == "42" and gateway.seen[0].chat_kind == "private"


async def test_both_modes_hand_the_core_the_same_incoming(api):
    received = {}
    for mode in ("webhook", "polling"):
        gateway = gateway_for(api, mode=mode)
        async with gateway:
            await api.push_message(-100900, "@hermes_test_bot echo: same", chat_type="supergroup", thread_id=4)
            await eventually(lambda gateway=gateway: len(gateway.seen) == 1, lambda gateway=gateway: gateway.seen)
            await eventually(lambda: len(api.chat(-100900).screen) == len(received) + 1,
                             lambda: api.chat(-100900).messages)
        received[mode] = gateway.seen[0]
    webhook, polled = received["webhook"], received["polling"]
    assert webhook.update_id != polled.update_id  # two different updates...
    assert webhook.__class__(**{**vars_of(webhook), "update_id": polled.update_id,
                                "message_id": polled.message_id}) == polled  # ...read the same way
    assert webhook.mentioned and webhook.thread_id == "4" and webhook.chat_kind == "supergroup"


def vars_of(incoming):
    return {name: getattr(incoming, name) for name in incoming.__dataclass_fields__}


async def test_a_redelivered_update_gets_no_second_reply(api):
    gateway = gateway_for(api)
    async with gateway:
        update_id = await api.push_message(7, "echo: only once")
        await eventually(lambda: api.screen(7) == ["only once"], lambda: api.chat(7).messages)
        assert await api.deliver_again(update_id) == 200, "a redelivery is acknowledged like any update"
        await eventually(lambda: len(gateway.replies) == 2, lambda: gateway.replies)
        first, second = await asyncio.gather(*gateway.replies)
    assert first.delivered and second is None, "the core recognised the update_id"
    assert api.screen(7) == ["only once"]
    assert [c.method for c in api.chat(7).calls if c.method == "sendMessage"] == ["sendMessage"]


async def test_a_request_without_the_secret_gets_401_and_nothing_else(api, caplog):
    caplog.set_level(logging.DEBUG)
    port = free_port()
    gateway = gateway_for(api, port=port)
    update = {"update_id": 999, "message": {"message_id": 1, "date": 0, "text": "echo: sneaky",
                                            "chat": {"id": 5, "type": "private"}}}
    async with gateway:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/webhooks/telegram"
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"},
                            {"X-Telegram-Bot-Api-Secret-Token": SECRET + "x"}):
                async with http.post(url, json=update, headers=headers) as resp:
                    assert resp.status == 401 and await resp.read() == b""
            await asyncio.sleep(0.2)
    assert gateway.seen == [] and api.chat(5).calls == []
    assert SECRET not in caplog.text


@pytest.mark.parametrize("body", [b"not json at all", b"[1, 2]", b'{"update_id": "seven"}',
                                  b'{"update_id": 5, "message": "not a message"}', b""])
async def test_a_malformed_body_is_acknowledged_logged_once_and_ignored(api, caplog, body):
    port = free_port()
    gateway = gateway_for(api, port=port)
    async with gateway:
        caplog.clear()
        caplog.set_level(logging.DEBUG)
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{port}/webhooks/telegram", data=body,
                                 headers={"X-Telegram-Bot-Api-Secret-Token": SECRET,
                                          "Content-Type": "application/json"}) as resp:
                assert resp.status == 200, "never 5xx: Telegram would only post the same body again"
        await api.push_message(6, "echo: still answering")
        await eventually(lambda: api.screen(6) == ["still answering"], lambda: api.chat(6).messages)
    ignored = [r for r in caplog.records if "not an update" in r.getMessage()]
    assert len(ignored) == 1 and "\n" not in ignored[0].getMessage()
    assert [i.chat_id for i in gateway.seen] == ["6"]
    assert SECRET not in caplog.text


async def test_the_secret_and_token_never_reach_the_log(api, caplog):
    caplog.set_level(logging.DEBUG)
    gateway = gateway_for(api)
    async with gateway:
        await api.push_message(8, "echo: quiet")
        await eventually(lambda: api.screen(8) == ["quiet"], lambda: api.chat(8).messages)
    assert [m for m, _ in api.requests if m == "setWebhook"], "the secret did travel (in setWebhook's body)"
    assert SECRET.lower() not in caplog.text.lower() and SECRET_HALF.lower() not in caplog.text.lower()


async def test_polling_mode_removes_a_stale_webhook(api):
    stale = gateway_for(api)
    async with stale:
        pass
    assert api.webhook is not None, "a webhook run leaves its webhook set (updates queue up while it is down)"
    gateway = gateway_for(api, mode="polling")
    async with gateway:
        assert api.webhook is None
        await api.push_message(9, "echo: polled again")
        await eventually(lambda: api.screen(9) == ["polled again"], lambda: api.chat(9).messages)


async def test_a_polling_bot_opens_no_listener(api):
    gateway = gateway_for(api, mode="polling")
    async with gateway:
        assert gateway.url is None, "polling mounts no route, so no port is opened for it"


@pytest.mark.parametrize("section, key", [
    ({"mode": "push"}, "platforms.telegram.mode"),
    ({"mode": "webhook", "webhook_secret": SECRET}, "platforms.telegram.webhook_url"),
    ({"mode": "webhook", "webhook_url": "ftp://example.org/x", "webhook_secret": SECRET},
     "platforms.telegram.webhook_url"),
    ({"mode": "webhook", "webhook_url": "https://example.org/webhooks/telegram"}, "platforms.telegram.webhook_secret"),
    ({"mode": "webhook", "webhook_url": "https://example.org/webhooks/telegram", "webhook_secret": "has space!"},
     "platforms.telegram.webhook_secret"),
    ({"webhook_url": "https://example.org/webhooks/telegram"}, "platforms.telegram.webhook_url"),
])
async def test_a_bad_webhook_setting_stops_start_up_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        PlatformRunner(plugin, {"token": TOKEN, **section}, source="config.yaml").build()
    assert str(caught.value).startswith(f"config.yaml: {key}: ")
    assert "\n" not in str(caught.value) and "has space" not in str(caught.value)


async def test_a_webhook_url_telegram_refuses_stops_start_up_with_one_line(api):
    gateway = gateway_for(api)
    api.fail_method("setWebhook", 400, "Bad Request: bad webhook: Failed to resolve host: Name or service not known")
    with pytest.raises(Exception, match="platforms.telegram.webhook_url: a URL Telegram accepts") as caught:
        async with gateway:
            pass
    assert "\n" not in str(caught.value) and SECRET not in str(caught.value)


async def test_an_oversized_body_gets_413_and_nothing_else(api):
    port = free_port()
    gateway = gateway_for(api, port=port)
    body = b'{"update_id": 1, "pad": "' + b"x" * (5 * 1024 * 1024) + b'"}'  # over api_server.max_body_bytes
    async with gateway:
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{port}/webhooks/telegram", data=body,
                                 headers={"X-Telegram-Bot-Api-Secret-Token": SECRET,
                                          "Content-Type": "application/json"}) as resp:
                assert resp.status == 413
        await asyncio.sleep(0.2)
    assert gateway.seen == []


async def test_a_message_arriving_while_the_gateway_stops_gets_503_and_is_answered_when_delivered_again(api):
    """Acknowledging it would lose it: the stopping gateway no longer answers, so Telegram must retry."""
    port = free_port()
    gateway = gateway_for(api, port=port)
    update = {"update_id": 4242, "message": {"message_id": 1, "date": 0, "text": "echo: late but answered",
                                             "chat": {"id": 11, "type": "private", "first_name": "Ada"},
                                             "from": {"id": 1001, "is_bot": False, "first_name": "Ada"}}}
    url = f"http://127.0.0.1:{port}/webhooks/telegram"
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    await gateway.start()
    await api.push_message(10, "echo: " + " ".join(f"w{i}" for i in range(400)))  # a reply still running
    await eventually(lambda: len(api.chat(10).messages) >= 1, lambda: api.chat(10).calls)
    stopping = asyncio.get_running_loop().create_task(gateway.stop())
    await eventually(lambda: not gateway.accepting, lambda: "still accepting")
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=update, headers=headers) as resp:
            assert resp.status == 503 and resp.headers.get("Retry-After")
    await stopping
    assert api.chat(11).calls == []
    restarted = gateway_for(api, port=port)
    async with restarted:  # the update id was not taken as seen: its delivery again is answered
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json=update, headers=headers) as resp:
                assert resp.status == 200
        await eventually(lambda: api.screen(11) == ["late but answered"], lambda: api.chat(11).messages)


async def test_the_client_mounts_its_route_only_in_webhook_mode_and_hands_updates_to_its_context(api):
    """Built by the kit as the gateway builds it: the route is served at ``runner.url``, not started (no setWebhook)."""
    update = {"update_id": 77, "message": {"message_id": 3, "date": 0, "text": "hello",
                                           "chat": {"id": 12, "type": "private", "first_name": "Ada"},
                                           "from": {"id": 1001, "is_bot": False, "first_name": "Ada"}}}
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    async with PlatformRunner(plugin, {"token": TOKEN, "base_url": api.base_url}, start=False) as polling:
        assert polling.url is None, "a polling client mounts nothing"
    section = {"token": TOKEN, "base_url": api.base_url, "mode": "webhook", "webhook_secret": SECRET,
               "webhook_url": "https://bot.example.com/webhooks/telegram"}
    async with PlatformRunner(plugin, section, start=False) as runner, aiohttp.ClientSession() as http:
        url = f"{runner.url}/webhooks/telegram"
        async with http.post(url, json=update) as resp:
            assert resp.status == 401
        async with http.post(url, json=update, headers=headers) as resp:
            assert resp.status == 200
        runner.accepting = False  # the gateway is stopping
        async with http.post(url, json={**update, "update_id": 78}, headers=headers) as resp:
            assert resp.status == 503
    assert [(i.chat_id, i.text, i.update_id) for i in runner.received] == [("12", "hello", "77")]
    assert api.webhook is None, "not started: Telegram was not told anything"


async def test_a_secret_header_with_bytes_that_are_not_utf8_gets_401_never_500(api):
    port = free_port()
    gateway = gateway_for(api, port=port)
    body = b'{"update_id": 998, "message": {"message_id": 1, "date": 0, "text": "echo: odd", "chat": {"id": 5, "type": "private"}}}'
    async with gateway:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /webhooks/telegram HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"X-Telegram-Bot-Api-Secret-Token: \xff\xfe" + SECRET.encode() + b"\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
        writer.close()
        await asyncio.sleep(0.2)
    assert status_line.split()[1] == b"401", status_line
    assert gateway.seen == [] and api.chat(5).calls == []


async def test_a_webhook_asks_for_edits_and_hands_an_edit_over_as_one(api):
    gateway = gateway_for(api)
    async with gateway:
        assert api.webhook["allowed_updates"] == ["message", "edited_message", "callback_query"]
        await api.push_message(43, "echo: first words")
        await eventually(lambda: api.screen(43) == ["first words"], lambda: api.chat(43).messages)
        await api.push_edit(43, 1, "echo: better words")
        await eventually(lambda: len(gateway.seen) == 2, lambda: gateway.seen)
    edit = gateway.seen[1]
    assert (edit.edit_of, edit.message_id, edit.text) == ("1", "1", "echo: better words")
    assert edit.update_id != gateway.seen[0].update_id
    assert api.screen(43) == ["first words"], "an edit of an answered message is not answered"
