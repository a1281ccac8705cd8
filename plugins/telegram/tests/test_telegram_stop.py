"""SIGTERM with a 200,000-character reply in flight: ``hermes-gateway run`` exits 0 within ``shutdown_grace + 5`` s.

Polling and webhook. The reply is about fifty messages at one a second:
when the signal comes, after the grace the reply is cut (what was shown
stays, no cursor), updates arriving meanwhile are never answered 500.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from telegram_test_support import TOKEN

GRACE = 2
CHAT = 42
SECRET = "s3cret-Webhook_token-0123456789"


def long_text(chars: int) -> str:
    return " ".join(f"w{i}" for i in range(chars // 4))[:chars].rsplit(" ", 1)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(api, mode: str) -> dict:
    port = free_port()
    section = {"enabled": True, "token": TOKEN, "base_url": api.base_url, "poll_timeout": 2}
    if mode == "webhook":
        section.update(mode="webhook", webhook_url=f"http://127.0.0.1:{port}/webhooks/telegram",
                       webhook_secret=SECRET)
    return {
        "conversation": {"shutdown_grace": GRACE},
        "model": {"demo": {"tokens_per_second": 0}},
        "streaming": {"telegram": True},
        "api_server": {"host": "127.0.0.1", "port": port, "enabled": False},
        "platforms": {"telegram": section},
    }


@pytest.mark.parametrize("mode", ["polling", "webhook"])
async def test_sigterm_with_a_200000_character_reply_in_flight_exits_0_within_the_bound(api, tmp_path, mode):
    async with GatewayProcess(config(api, mode), tmp_path) as gateway:
        await gateway.started()
        await api.push_message(CHAT, "echo: " + long_text(200_000))
        await eventually(lambda: len(api.screen(CHAT)) >= 2, lambda: api.chat(CHAT).messages[-1:], timeout=30)

        async def updates_keep_coming() -> None:  # Telegram does not know we are stopping
            for i in range(1000):
                try:
                    await api.push_message(CHAT, f"echo: still there? {i}")
                except Exception:
                    return
                await asyncio.sleep(0.02)

        hammer = asyncio.create_task(updates_keep_coming())
        stopped = await gateway.stop(timeout=30)
        hammer.cancel()
        await asyncio.gather(hammer, return_exceptions=True)
    assert stopped.returncode == 0, stopped.err[-3000:]
    assert stopped.seconds <= GRACE + 5, f"stopping took {stopped.seconds:.1f}s"
    screen = api.screen(CHAT)
    assert 2 <= len(screen) < 45, "the reply was cut, not finished"
    assert not any("▌" in text for text in screen), screen[-1][-80:]
    assert 500 not in [status for _, status in api.webhook_deliveries]
