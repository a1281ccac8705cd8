"""The gateway starts, and says why, when python-telegram-bot is missing: the SDK is imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway import DeliveryError, Stream, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway, StartError
from hermes_telegram import TelegramPlugin
from telegram_test_support import TOKEN


def test_importing_the_plugin_does_not_import_the_sdk():
    code = ("import sys, hermes_telegram, hermes_telegram.emulator; "
            "print('telegram' in sys.modules, 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "telegram", None)  # "import telegram" now raises ImportError
    plugin = TelegramPlugin(TOKEN, base_url="http://127.0.0.1:9/bot")
    with pytest.raises(DeliveryError, match="pip install hermes-telegram") as caught:
        await plugin.on_delta(Stream(platform=plugin.platform, chat_id="1"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "telegram", None)
    plugin = TelegramPlugin()
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"platforms": {"telegram": {"token": TOKEN, "base_url": "http://127.0.0.1:9/bot"}}}, env={})
    with pytest.raises(StartError, match="platforms.telegram: telegram needs python-telegram-bot"):
        async with Gateway(cfg, plugins):
            pass
