"""The gateway starts, and says why, when slack-bolt/slack_sdk are missing: they are imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway import DeliveryError, Stream, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway, StartError
from hermes_slack import SlackPlugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN


def test_importing_the_plugin_does_not_import_the_sdks():
    code = ("import sys, hermes_slack, hermes_slack.emulator; "
            "print('slack_sdk' in sys.modules, 'slack_bolt' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


async def test_without_the_sdk_a_send_fails_with_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "slack_sdk.web.async_client", None)
    plugin = SlackPlugin(BOT_TOKEN, app_token=APP_TOKEN, api_base_url="http://127.0.0.1:9/api/")
    with pytest.raises(DeliveryError, match="pip install hermes-slack") as caught:
        await plugin.on_delta(Stream(platform=plugin.platform, chat_id="D1", thread_id="1.0"), None, "hi")
    assert not caught.value.retryable


async def test_without_the_sdk_an_enabled_platform_stops_start_up_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "slack_sdk.web.async_client", None)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[SlackPlugin()])
    cfg = parse_config({"platforms": {"slack": {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN,
                                                "api_base_url": "http://127.0.0.1:9/api/"}}}, env={})
    with pytest.raises(StartError, match="platforms.slack: slack needs slack_sdk and slack-bolt") as caught:
        async with Gateway(cfg, plugins):
            pass
    assert "\n" not in str(caught.value)
