"""The gateway starts, and says why, when discord.py is missing: the SDK is imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from discord_test_support import OFFLINE, plugin_for_tests
from hermes_gateway import DeliveryError, StartError, Stream
from hermes_gateway.testing import PlatformRunner, TestGateway


def test_importing_the_plugin_does_not_import_the_sdk():
    code = "import sys, hermes_discord; print('discord' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


def test_building_a_client_does_not_import_the_sdk():
    code = ("import sys, hermes_discord\n"
            "from hermes_gateway.testing import PlatformRunner\n"
            f"PlatformRunner(hermes_discord.plugin, settings={OFFLINE!r}).build()\n"
            "print('discord' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "discord", None)  # "import discord" now raises ImportError
    async with PlatformRunner(plugin_for_tests(), settings=OFFLINE, start=False) as runner:
        with pytest.raises(DeliveryError, match="pip install hermes-discord") as caught:
            await runner.client.on_delta(Stream(platform=runner.platform, chat_id="1"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "discord", None)
    with pytest.raises(StartError, match="platforms.discord: discord needs discord.py") as caught:
        async with TestGateway({"platforms": {"discord": OFFLINE}}, plugin_for_tests()):
            pass
    assert "\n" not in str(caught.value)
