"""The gateway starts, and says why, when discord.py is missing: the SDK is imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from discord_test_support import TOKEN
from hermes_gateway import DeliveryError, Stream, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway, StartError
from hermes_discord import DiscordPlugin


def test_importing_the_plugin_does_not_import_the_sdk():
    code = "import sys, hermes_discord; print('discord' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "discord", None)  # "import discord" now raises ImportError
    plugin = DiscordPlugin(TOKEN, api_base_url="http://127.0.0.1:9/api/v10", gateway_url="ws://127.0.0.1:9/ws")
    with pytest.raises(DeliveryError, match="pip install hermes-discord") as caught:
        await plugin.on_delta(Stream(platform=plugin.platform, chat_id="1"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "discord", None)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[DiscordPlugin()])
    cfg = parse_config({"platforms": {"discord": {"token": TOKEN}}}, env={})
    with pytest.raises(StartError, match="platforms.discord: discord needs discord.py"):
        async with Gateway(cfg, plugins):
            pass
