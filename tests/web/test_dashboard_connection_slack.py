"""Slack's connection as the dashboard shows it, against the Slack emulator: Socket Mode's websocket up is
"connected", an outage (socket closed, reconnects refused) "disconnected" until slack_sdk is back; in HTTP mode
auth.test answering is "connected", failing "disconnected", and the next signed event "connected" again."""

from __future__ import annotations

import pytest

from hermes_gateway.testing import eventually
from dashboard_support import platform, platform_gateway, state_of, until_state

pytest.importorskip("hermes_slack")
from hermes_slack import plugin  # noqa: E402
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, SlackEmulator  # noqa: E402
from hermes_gateway import RateBudget  # noqa: E402

LIMITS = {"budgets": {"default": RateBudget(rate=200, burst=20)}, "bot_budget": RateBudget(rate=400, burst=40),
          "edit_interval": 0.0}


@pytest.fixture
async def api():
    async with SlackEmulator() as emulator:
        yield emulator


def slack_gateway(api, mode):
    section = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": SIGNING_SECRET,
               "api_base_url": api.base_url, "mode": mode}
    return platform_gateway(plugin, "slack", section, limits=LIMITS,
                            streaming={"slack": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}})


async def test_a_socket_mode_outage_is_disconnected_until_slack_sdk_reconnects(api):
    gateway = slack_gateway(api, "socket")
    async with gateway:
        row = await until_state(gateway, "slack", "connected")
        assert row["mode"] == "socket"
        await api.take_socket_mode_down()
        down = await until_state(gateway, "slack", "disconnected")
        assert down["connected"] is False and "Socket Mode" in down["connection_error"]
        assert down["last_error"] == down["connection_error"]
        assert not any(secret in str(down) for secret in (BOT_TOKEN, APP_TOKEN, SIGNING_SECRET))
        await eventually(lambda: api.refused_connections >= 1, lambda: api.refused_connections, timeout=30)
        assert platform(await state_of(gateway), "slack")["state"] == "disconnected", "still down while refused"
        api.bring_socket_mode_back()
        up = await until_state(gateway, "slack", "connected", timeout=60)  # slack_sdk retries every few seconds
        assert up["connection_error"] is None
        await api.push_message("D0ALICE", "echo: back", kind="im")
        await eventually(lambda: api.screen("D0ALICE") == ["back"], lambda: api.calls, timeout=30)
    assert platform(await state_of(gateway), "slack")["state"] == "stopped"


async def test_http_mode_is_connected_when_auth_test_answers(api):
    gateway = slack_gateway(api, "http")
    async with gateway:
        row = await until_state(gateway, "slack", "connected")
        assert row["mode"] == "http"


async def test_http_mode_with_auth_test_failing_is_disconnected_until_a_signed_event_comes(api):
    api.fail_method("auth.test", "internal_error")
    gateway = slack_gateway(api, "http")
    async with gateway:
        down = await until_state(gateway, "slack", "disconnected")
        assert "auth.test failed: internal_error" in down["connection_error"]
        from hermes_slack.receiving import EVENTS_PATH

        api.events_url = gateway.url + EVENTS_PATH
        await api.push_message("D0ALICE", "echo: here", kind="im")
        await until_state(gateway, "slack", "connected")
