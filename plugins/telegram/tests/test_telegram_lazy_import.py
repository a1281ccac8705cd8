"""The gateway starts, and says why, when python-telegram-bot is missing: the SDK is imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway import DeliveryError, StartError, Stream
from hermes_gateway.testing import TestGateway
from hermes_telegram import PLATFORM, plugin
from telegram_test_support import TOKEN, fast_runner


def test_importing_the_plugin_does_not_import_the_sdk():
    code = ("import sys, hermes_telegram, hermes_telegram.emulator; "
            "print('telegram' in sys.modules, 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "telegram", None)  # "import telegram" now raises ImportError
    client = fast_runner("http://127.0.0.1:9/bot").client  # building the client needs no SDK
    with pytest.raises(DeliveryError, match="pip install hermes-telegram") as caught:
        await client.on_delta(Stream(platform=PLATFORM, chat_id="1"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "telegram", None)
    gateway = TestGateway({"platforms": {"telegram": {"token": TOKEN, "base_url": "http://127.0.0.1:9/bot"}}}, plugin)
    with pytest.raises(StartError, match="platforms.telegram: telegram needs python-telegram-bot") as caught:
        async with gateway:
            pass
    assert "\n" not in str(caught.value)
