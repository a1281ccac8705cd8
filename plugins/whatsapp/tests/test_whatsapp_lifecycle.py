"""Installed through its entry point, started and refused by the gateway like any platform."""

from __future__ import annotations

import logging
from importlib.metadata import entry_points

import pytest

from hermes_gateway import ConfigError, StartError
from hermes_gateway.testing import TestGateway
from whatsapp_test_support import SECRETS, USER, config, eventually, plugin, section, webhook_url


def quiet(meta, **whatsapp):
    """A config with only this platform, no API server."""
    return {"platforms": {"whatsapp": {**section(meta), **whatsapp}}, "api_server": {"enabled": False}}


async def test_the_installed_plugin_answers_through_the_entry_point(meta):
    """The entry point, WhatsApp's real limits, config from platforms.whatsapp: the whole path."""
    (point,) = entry_points(group="hermes_gateway", name="whatsapp")
    assert point.dist is not None and point.dist.name == "hermes-whatsapp"
    installed = point.load()
    assert installed is plugin
    found = []
    installed.register_platforms(found.append)
    (platform,) = found
    assert (platform.max_message_length, platform.length_unit) == (4096, "chars")
    assert platform.bot_budget is not None and platform.bot_budget.rate == 80
    assert platform.budget_for("private").rate == pytest.approx(1 / 6)
    async with TestGateway(config(meta), installed) as gateway:
        assert gateway.started_platforms == ["whatsapp"]
        assert await meta.deliver(webhook_url(gateway), meta.text_message(USER, "echo: via the entry point")) == 200
        await eventually(lambda: meta.screen(USER) == ["via the entry point"], lambda: meta.calls)


async def test_a_token_meta_rejects_stops_start_up_with_one_line(meta, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StartError, match="platforms.whatsapp.access_token: a token Meta accepts") as caught:
        async with TestGateway(quiet(meta, access_token="EAAsomeoneelsestoken"), plugin):
            pass
    assert "\n" not in str(caught.value) and "EAAsomeoneelsestoken" not in str(caught.value)
    assert not any(secret in caplog.text for secret in SECRETS)


async def test_an_unknown_phone_number_id_stops_start_up_naming_it(meta):
    with pytest.raises(StartError, match="platforms.whatsapp.phone_number_id"):
        async with TestGateway(quiet(meta, phone_number_id="5550000000"), plugin):
            pass


async def test_an_unreachable_graph_api_does_not_stop_start_up(meta, caplog):
    """Meta may be down for a minute: the webhook keeps listening, sends are retried by the core."""
    url = meta.base_url
    await meta.stop()
    with caplog.at_level(logging.WARNING):
        async with TestGateway(quiet(meta, api_base_url=url), plugin) as gateway:
            assert gateway.started_platforms == ["whatsapp"] and gateway.url is not None
    assert "could not look up the phone number" in caplog.text


@pytest.mark.parametrize("change, key", [
    ({"access_token": None}, "platforms.whatsapp.access_token"),
    ({"phone_number_id": "not-a-number"}, "platforms.whatsapp.phone_number_id"),
    ({"webhook": "x"}, "platforms.whatsapp.webhook"),
    ({"allowed_users": {"a": 1}}, "platforms.whatsapp.allowed_users"),
])
async def test_a_bad_section_stops_start_up_naming_the_key(meta, change, key):
    bad = {k: v for k, v in {**section(meta), **change}.items() if v is not None}
    with pytest.raises(ConfigError) as caught:
        async with TestGateway({"platforms": {"whatsapp": bad}, "api_server": {"enabled": False}}, plugin):
            pass
    assert str(caught.value).startswith(f"(test config): {key}: ") and "\n" not in str(caught.value)
    assert meta.calls == []


async def test_two_gateways_in_one_process_share_no_client(meta):
    """One fresh client per gateway: no module globals, no state carried from one run to the next."""
    first, second = TestGateway(quiet(meta), plugin), TestGateway(quiet(meta), plugin)
    async with first, second:
        assert first.client("whatsapp") is not second.client("whatsapp")
        assert first.url != second.url
    async with first:
        assert first.client("whatsapp") is not None
    restarted = first.client("whatsapp")
    async with first:
        assert first.client("whatsapp") is not restarted, "a restarted gateway builds its client anew"


async def test_the_connection_is_reported_from_the_start_up_lookup_and_the_signed_webhook(meta):
    from whatsapp_test_support import ROUTE, runner_for

    meta.fail_lookup(2, status=503)  # Meta briefly unavailable at start-up
    async with runner_for(meta, start=True) as runner:
        context = runner.context
        assert context.connection == "disconnected" and "phone number lookup failed" in context.connection_error
        assert await meta.deliver(runner.url + ROUTE, meta.text_message(USER, "hi"),
                                  headers={"Content-Type": "application/json"}) == 401  # unsigned: proves nothing
        assert context.connection == "disconnected"
        assert await meta.deliver(runner.url + ROUTE, meta.text_message(USER, "hi")) == 200
        assert context.connection == "connected" and [m.text for m in runner.received] == ["hi"]
    async with runner_for(meta, start=True) as runner:
        assert runner.context.connection == "connected", "the lookup answered: token and number are good"
