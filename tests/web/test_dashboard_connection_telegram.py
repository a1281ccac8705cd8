"""Telegram's connection as the dashboard shows it, against the Bot API emulator: "connected" means a poll
answered (or Telegram took the webhook), a failing poll loop is "disconnected" with its error, and a recovery
is "connected" again; ``/metrics`` says the same as ``hermes_platform_connected``."""

from __future__ import annotations

import socket

import pytest
from prometheus_client import generate_latest

from dashboard_support import TOKEN, platform, state_of, telegram_gateway, until_state

pytest.importorskip("hermes_telegram")
from hermes_telegram import polling  # noqa: E402
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


def connected_metric(gateway) -> str:
    lines = generate_latest(gateway.metrics.registry).decode().splitlines()
    return "\n".join(line for line in lines if line.startswith("hermes_platform_connected{"))


async def test_a_failing_poll_loop_is_disconnected_with_its_error_and_connected_again_once_it_answers(api,
                                                                                                       monkeypatch):
    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.3)
    gateway = telegram_gateway(api.base_url)
    async with gateway:
        await until_state(gateway, "telegram", "connected")
        assert connected_metric(gateway) == 'hermes_platform_connected{platform="telegram"} 1.0'
        api.fail_method("getUpdates", 502, "Bad Gateway", times=3)  # Telegram unreachable for a while
        down = await until_state(gateway, "telegram", "disconnected")
        assert down["connected"] is False and "Bad Gateway" in down["connection_error"]
        assert down["last_error"] == down["connection_error"] and TOKEN not in str(down)
        assert connected_metric(gateway) == 'hermes_platform_connected{platform="telegram"} 0.0'
        up = await until_state(gateway, "telegram", "connected")
        assert up["connection_error"] is None and "Bad Gateway" in up["last_error"], "the last error stays"
        assert connected_metric(gateway) == 'hermes_platform_connected{platform="telegram"} 1.0'
        await api.push_message(5, "echo: back")  # and it really receives again
        await until_messages(api, 5, ["back"])
    assert platform(await state_of(gateway), "telegram")["state"] == "stopped"
    assert connected_metric(gateway) == 'hermes_platform_connected{platform="telegram"} 0.0'


async def test_a_revoked_token_is_disconnected_for_good_and_says_which_key(api):
    gateway = telegram_gateway(api.base_url)
    async with gateway:
        await until_state(gateway, "telegram", "connected")
        api.fail_method("getUpdates", 401, "Unauthorized")
        down = await until_state(gateway, "telegram", "disconnected")
    assert "platforms.telegram.token" in down["connection_error"] and TOKEN not in str(down)


async def test_a_bot_that_never_reaches_telegram_is_not_called_connected(api):
    api.fail_method("getUpdates", 502, "Bad Gateway", times=1000)
    gateway = telegram_gateway(api.base_url)
    async with gateway:
        down = await until_state(gateway, "telegram", "disconnected")
        assert down["connected"] is False and down["enabled"] is True and down["mode"] == "polling"


async def test_a_webhook_bot_is_connected_once_telegram_took_the_webhook(api):
    port = free_port()
    section = {"enabled": True, "token": TOKEN, "base_url": api.base_url, "mode": "webhook",
               "webhook_url": f"http://127.0.0.1:{port}/webhooks/telegram", "webhook_secret": "s3cret-webhook-9"}
    gateway = telegram_gateway(api.base_url, platforms={"telegram": section},
                               api_server={"host": "127.0.0.1", "port": port})
    async with gateway:
        row = await until_state(gateway, "telegram", "connected")
        assert row["mode"] == "webhook" and api.webhook is not None
        await api.push_message(6, "echo: by webhook")
        await until_messages(api, 6, ["by webhook"])


async def until_messages(api, chat, texts):
    from hermes_gateway.testing import eventually

    await eventually(lambda: api.screen(chat) == texts, lambda: api.chat(chat).messages)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
