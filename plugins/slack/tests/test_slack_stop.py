"""SIGTERM with a 200,000-character reply in flight: ``hermes-gateway run`` exits 0 within ``shutdown_grace + 5`` s.

In Socket Mode and over the Events API. The reply is cut after the grace:
what was shown stays, no message keeps the cursor or its streaming state,
and events arriving meanwhile are never answered 500.
"""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from hermes_slack import EVENTS_PATH
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET

GRACE = 2
CHANNEL = "D0STOP"


def long_text(chars: int) -> str:
    return " ".join(f"w{i}" for i in range(chars // 4))[:chars].rsplit(" ", 1)[0]


def config(api, mode: str) -> dict:
    return {
        "conversation": {"shutdown_grace": GRACE},
        "model": {"demo": {"tokens_per_second": 0}},
        "streaming": {"slack": True},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
        "platforms": {"slack": {"enabled": True, "bot_token": BOT_TOKEN, "app_token": APP_TOKEN,
                                "signing_secret": SIGNING_SECRET, "mode": mode, "api_base_url": api.base_url}},
    }


@pytest.mark.parametrize("mode", ["socket", "http"])
async def test_sigterm_with_a_200000_character_reply_in_flight_exits_0_within_the_bound(api, tmp_path, mode):
    async with GatewayProcess(config(api, mode), tmp_path) as gateway:
        await gateway.started()
        if mode == "socket":
            await api.wait_connected(timeout=30)
        else:
            assert gateway.url is not None
            api.events_url = gateway.url + EVENTS_PATH
        ts = await api.push_message(CHANNEL, "echo: " + long_text(200_000), kind="im")
        await eventually(lambda: len(api.screen(CHANNEL, ts)) >= 1, lambda: api.calls[-5:], timeout=30)
        statuses: list[int] = []

        async def events_keep_coming() -> None:  # Slack does not know we are stopping
            for i in range(1000):
                try:
                    await api.push_message(CHANNEL, f"echo: still there? {i}", kind="im")
                    statuses.extend(d.status for d in api.deliveries[-1:] if d.status is not None)
                except Exception:
                    return  # the socket or the listener closed
                await asyncio.sleep(0.02)

        hammer = asyncio.create_task(events_keep_coming())
        stopped = await gateway.stop(timeout=30)
        hammer.cancel()
        await asyncio.gather(hammer, return_exceptions=True)
    assert stopped.returncode == 0, stopped.err[-3000:]
    assert stopped.seconds <= GRACE + 5, f"stopping took {stopped.seconds:.1f}s"
    screen = api.screen(CHANNEL, ts)
    assert screen and sum(len(text) for text in screen) < 190_000, "the reply was cut, not finished"
    assert not any("▌" in text for text in screen), screen[-1][-80:]
    assert not api.still_streaming()
    assert 500 not in statuses
