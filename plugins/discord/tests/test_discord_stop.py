"""SIGTERM with a 200,000-character reply in flight: ``hermes-gateway run`` exits 0 within ``shutdown_grace + 5`` s.

Over the gateway socket. The reply is about a hundred messages of 2,000
characters, paced by Discord's buckets: after the grace it is cut (what
was shown stays, no cursor) and the process ends.
"""

from __future__ import annotations

import asyncio

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from discord_test_support import TOKEN

GRACE = 2


def long_text(chars: int) -> str:
    return " ".join(f"w{i}" for i in range(chars // 4))[:chars].rsplit(" ", 1)[0]


async def test_sigterm_with_a_200000_character_reply_in_flight_exits_0_within_the_bound(api, tmp_path):
    config = {
        "conversation": {"shutdown_grace": GRACE},
        "model": {"demo": {"tokens_per_second": 0}},
        "streaming": {"discord": True},
        "api_server": {"enabled": False},
        "platforms": {"discord": {"enabled": True, "token": TOKEN, "api_base_url": api.api_base_url,
                                  "gateway_url": api.gateway_url}},
    }
    dm = api.dm()
    async with GatewayProcess(config, tmp_path) as gateway:
        await gateway.started(timeout=60)
        await api.wait_connected()
        await api.push_message(dm, "echo: " + long_text(200_000))
        await eventually(lambda: len(api.screen(dm)) >= 2, lambda: api.channel(dm).calls[-3:], timeout=30)

        async def messages_keep_coming() -> None:  # people keep writing while we stop
            for i in range(1000):
                try:
                    await api.push_message(dm, f"echo: still there? {i}")
                except Exception:
                    return
                await asyncio.sleep(0.02)

        hammer = asyncio.create_task(messages_keep_coming())
        stopped = await gateway.stop(timeout=30)
        hammer.cancel()
        await asyncio.gather(hammer, return_exceptions=True)
    assert stopped.returncode == 0, stopped.err[-3000:]
    assert stopped.seconds <= GRACE + 5, f"stopping took {stopped.seconds:.1f}s"
    screen = api.screen(dm)
    assert 2 <= len(screen) < 95, "the reply was cut, not finished"
    assert not any("▌" in text for text in screen), screen[-1][-80:]
