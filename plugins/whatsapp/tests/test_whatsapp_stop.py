"""SIGTERM with a 200,000-character reply in flight: ``hermes-gateway run`` exits 0 within ``shutdown_grace + 5`` s.

The reply is about fifty messages at WhatsApp's one message per six seconds
to a user: minutes of work when the signal comes. After the grace the reply
is cut (no message is sent any more), webhooks arriving meanwhile are
refused, and the process ends.
"""

from __future__ import annotations

import asyncio

import aiohttp

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from hermes_whatsapp import ROUTE
from whatsapp_test_support import USER, section

GRACE = 2


def long_text(chars: int) -> str:
    return " ".join(f"w{i}" for i in range(chars // 4))[:chars].rsplit(" ", 1)[0]


async def test_sigterm_with_a_200000_character_reply_in_flight_exits_0_within_the_bound(meta, tmp_path):
    config = {
        "conversation": {"shutdown_grace": GRACE},
        "model": {"demo": {"tokens_per_second": 0}},
        "platforms": {"whatsapp": section(meta)},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
    }
    async with GatewayProcess(config, tmp_path) as gateway:
        await gateway.started()
        assert gateway.url is not None
        webhook = gateway.url + ROUTE
        assert await meta.deliver(webhook, meta.text_message(USER, "echo: " + long_text(200_000))) == 200
        await eventually(lambda: len(meta.screen(USER)) >= 1, lambda: meta.calls, timeout=60)  # a loaded suite: slow
        refused: list[int] = []

        async def webhooks_keep_coming() -> None:  # Meta does not know we are stopping
            async with aiohttp.ClientSession() as session:
                for _ in range(1000):
                    try:
                        async with session.post(webhook, data=b"{}") as response:
                            refused.append(response.status)
                    except aiohttp.ClientError:
                        return  # the listener closed
                    await asyncio.sleep(0.01)

        hammer = asyncio.create_task(webhooks_keep_coming())
        stopped = await gateway.stop(timeout=30)
        hammer.cancel()
    assert stopped.returncode == 0, stopped.err[-3000:]
    assert stopped.seconds <= GRACE + 5, f"stopping took {stopped.seconds:.1f}s"
    screen = meta.screen(USER)
    assert 1 <= len(screen) < 45, "the reply was cut, not finished"
    assert not any("▌" in message for message in screen)
    assert refused and 500 not in refused
