"""The gateway starts, and says why, when slack-bolt/slack_sdk are missing: they are imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway import DeliveryError, StartError, Stream
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_slack import plugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN

NOWHERE = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": "http://127.0.0.1:9/api/"}


def test_importing_the_plugin_does_not_import_the_sdks():
    code = ("import sys, hermes_slack, hermes_slack.emulator; "
            "print('slack_sdk' in sys.modules, 'slack_bolt' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "slack_sdk.web.async_client", None)
    async with PlatformRunner(plugin, settings=NOWHERE, start=False) as slack:
        with pytest.raises(DeliveryError, match="pip install hermes-slack") as caught:
            await slack.client.on_delta(Stream(platform=slack.platform, chat_id="D1", thread_id="1.0"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "slack_sdk.web.async_client", None)
    with pytest.raises(StartError, match="platforms.slack: slack needs slack_sdk and slack-bolt") as caught:
        async with TestGateway({"platforms": {"slack": NOWHERE}}, plugin):
            pass
    assert "\n" not in str(caught.value)
