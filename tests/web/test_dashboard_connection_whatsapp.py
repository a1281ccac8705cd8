"""WhatsApp's connection as the dashboard shows it, against the Graph API emulator: the route mounted and the
token and number checked at start is "connected"; a start-up lookup that fails (Meta briefly down) is
"disconnected" with the error, and the next signed webhook POST (Meta reaches the gateway) "connected"."""

from __future__ import annotations

import pytest

from hermes_gateway.testing import eventually
from dashboard_support import platform_gateway, until_state

pytest.importorskip("hermes_whatsapp")
from hermes_whatsapp import ROUTE, plugin  # noqa: E402
from hermes_whatsapp.emulator import GraphApiEmulator  # noqa: E402

TOKEN = "EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ"
PHONE_ID = "106540352242922"
APP_SECRET = "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b"
USER = "4915112345678"


@pytest.fixture
async def meta():
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as emulator:
        yield emulator


def whatsapp_gateway(meta):
    section = {"access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": APP_SECRET,
               "verify_token": "hermes-verify-7Q2x", "api_base_url": meta.base_url}
    return platform_gateway(plugin, "whatsapp", section)


async def test_a_checked_token_and_number_with_the_route_mounted_is_connected(meta):
    gateway = whatsapp_gateway(meta)
    async with gateway:
        row = await until_state(gateway, "whatsapp", "connected")
    assert row["mode"] == "webhook" and row["last_error"] is None


async def test_a_failed_lookup_at_start_is_disconnected_until_meta_posts_a_signed_webhook(meta):
    meta.fail_lookup(2, status=503)
    gateway = whatsapp_gateway(meta)
    async with gateway:
        down = await until_state(gateway, "whatsapp", "disconnected")
        assert "phone number lookup failed" in down["connection_error"] and down["last_error"]
        assert TOKEN not in str(down) and APP_SECRET not in str(down)
        forged = await meta.deliver(gateway.url + ROUTE, meta.text_message(USER, "echo: forged"),
                                    headers={"X-Hub-Signature-256": "sha256=" + "0" * 64})
        assert forged in (401, 403)
        assert (await until_state(gateway, "whatsapp", "disconnected"))["connected"] is False, \
            "an unsigned POST proves nothing"
        assert await meta.deliver(gateway.url + ROUTE, meta.text_message(USER, "echo: hi")) == 200
        await until_state(gateway, "whatsapp", "connected")
        await eventually(lambda: meta.screen(USER) == ["hi"], lambda: meta.calls)
