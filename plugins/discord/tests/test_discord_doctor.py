"""``Platform.doctor`` for Discord against the emulator: a working token, a wrong one (401) with the fix."""

from __future__ import annotations

from discord_test_support import SECRET_PART, TOKEN
from hermes_discord.doctor import doctor
from hermes_discord.plugin import DiscordPlugin
from hermes_discord.settings import DiscordSettings
from hermes_discord.emulator import DiscordEmulator


async def test_the_token_works(api):
    lines = await doctor(DiscordSettings(token=TOKEN, api_base_url=api.api_base_url))
    assert len(lines) == 1 and lines[0][0] is True and lines[0][1].startswith("token accepted (users/@me: ")
    assert ("GET", "/users/@me") in api.requests


async def test_a_wrong_token_is_one_line_with_the_fix():
    async with DiscordEmulator(TOKEN.replace("q9Zr", "AAAA")) as elsewhere:  # a Discord that knows another token
        lines = await doctor(DiscordSettings(token=TOKEN, api_base_url=elsewhere.api_base_url))
    assert lines == [(False, "token: Discord refused it (users/@me answered 401 Unauthorized): reset and copy it in "
                             "the developer portal (Bot > Reset Token) into platforms.discord.token")]
    assert SECRET_PART not in repr(lines)


def test_the_platform_declares_it():
    assert DiscordPlugin().platform.doctor is doctor
