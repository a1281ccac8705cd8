"""Discord's connection as the dashboard shows it, against the Discord emulator: READY is "connected", a gateway
outage (the websocket closed, reconnects refused) is "disconnected", and the RESUMED after it "connected"."""

from __future__ import annotations

import pytest

from dashboard_support import platform, platform_gateway, state_of, until_state

pytest.importorskip("hermes_discord")
from hermes_discord import DiscordPlugin  # noqa: E402
from hermes_discord.emulator import DiscordEmulator  # noqa: E402

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"


@pytest.fixture
async def api():
    async with DiscordEmulator(TOKEN, bucket_limit=10_000, global_limit=100_000) as emulator:  # no pacing
        yield emulator


def discord_gateway(api):
    section = {"token": TOKEN, "api_base_url": api.api_base_url, "gateway_url": api.gateway_url}
    return platform_gateway(DiscordPlugin(guild_ready_timeout=0.1), "discord", section,
                            streaming={"discord": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}})


async def test_an_outage_of_the_gateway_websocket_is_disconnected_then_resumed_is_connected(api):
    gateway = discord_gateway(api)
    async with gateway:
        row = await until_state(gateway, "discord", "connected")  # READY came
        assert row["mode"] == "socket" and api.identifies == 1
        await api.take_gateway_down()
        down = await until_state(gateway, "discord", "disconnected")
        assert down["connected"] is False and "websocket closed" in down["connection_error"]
        assert down["last_error"] == down["connection_error"] and TOKEN not in str(down)
        await eventually_refused(api)
        assert platform(await state_of(gateway), "discord")["state"] == "disconnected", "still down while refused"
        api.bring_gateway_back()
        up = await until_state(gateway, "discord", "connected", timeout=60)  # discord.py's backoff, then RESUME
        assert up["connection_error"] is None and api.resumes >= 1
        dm = api.dm()
        await api.push_message(dm, "echo: back")
        from hermes_gateway.testing import eventually

        await eventually(lambda: api.screen(dm) == ["back"], lambda: api.channel(dm).calls)
    assert platform(await state_of(gateway), "discord")["state"] == "stopped"


async def eventually_refused(api):
    from hermes_gateway.testing import eventually

    await eventually(lambda: api.refused_connections >= 1, lambda: api.refused_connections, timeout=30)
