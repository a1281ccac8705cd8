"""Installed through its entry point, started and refused by the gateway like any platform."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway import ConfigError, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway, StartError
from whatsapp_test_support import SECRETS, USER, config, eventually, plugin_for, section, webhook_url


async def test_the_installed_plugin_answers_through_the_entry_point(meta):
    """The entry point, WhatsApp's real limits, config from platforms.whatsapp: the whole path."""
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools", "hermes_gateway._core.api_server.plugin"))
    registered = plugins.platform("whatsapp")
    assert registered.origin == "entry point of hermes-whatsapp"
    platform = registered.platform
    assert (platform.max_message_length, platform.length_unit) == (4096, "chars")
    assert platform.bot_budget is not None and platform.bot_budget.rate == 80
    assert platform.budget_for("private").rate == pytest.approx(1 / 6)
    async with Gateway(config(meta), plugins) as gateway:
        assert gateway.started_platforms == ["whatsapp"]
        assert await meta.deliver(webhook_url(gateway), meta.text_message(USER, "echo: via the entry point")) == 200
        await eventually(lambda: meta.screen(USER) == ["via the entry point"], lambda: meta.calls)


async def test_a_token_meta_rejects_stops_start_up_with_one_line(meta, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = plugin_for(meta)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"platforms": {"whatsapp": section(meta, access_token="EAAsomeoneelsestoken")},
                        "api_server": {"port": 0, "enabled": False}}, env={})
    with pytest.raises(StartError, match="platforms.whatsapp.access_token: a token Meta accepts") as caught:
        async with Gateway(cfg, plugins):
            pass
    assert "\n" not in str(caught.value) and "EAAsomeoneelsestoken" not in str(caught.value)
    assert not any(secret in caplog.text for secret in SECRETS)


async def test_an_unknown_phone_number_id_stops_start_up_naming_it(meta):
    plugin = plugin_for(meta)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"platforms": {"whatsapp": section(meta, phone_number_id="5550000000")},
                        "api_server": {"port": 0, "enabled": False}}, env={})
    with pytest.raises(StartError, match="platforms.whatsapp.phone_number_id"):
        async with Gateway(cfg, plugins):
            pass


async def test_an_unreachable_graph_api_does_not_stop_start_up(meta, caplog):
    """Meta may be down for a minute: the webhook keeps listening, sends are retried by the core."""
    url = meta.base_url
    await meta.stop()
    plugin = plugin_for(meta)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"platforms": {"whatsapp": {**section(meta), "api_base_url": url}},
                        "api_server": {"port": 0, "enabled": False}}, env={})
    with caplog.at_level(logging.WARNING):
        async with Gateway(cfg, plugins) as gateway:
            assert gateway.started_platforms == ["whatsapp"] and gateway.url is not None
    assert "could not look up the phone number" in caplog.text


@pytest.mark.parametrize("change, key", [
    ({"access_token": None}, "platforms.whatsapp.access_token"),
    ({"phone_number_id": "not-a-number"}, "platforms.whatsapp.phone_number_id"),
    ({"webhook": "x"}, "platforms.whatsapp.webhook"),
    ({"allowed_users": {"a": 1}}, "platforms.whatsapp.allowed_users"),
])
async def test_a_bad_section_stops_start_up_naming_the_key(meta, change, key):
    plugin = plugin_for(meta)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    bad = {k: v for k, v in {**section(meta), **change}.items() if v is not None}
    cfg = parse_config({"platforms": {"whatsapp": bad}, "api_server": {"port": 0, "enabled": False}}, env={})
    with pytest.raises(ConfigError) as caught:
        async with Gateway(cfg, plugins):
            pass
    assert str(caught.value).startswith(f"(inline): {key}: ") and "\n" not in str(caught.value)
    assert meta.calls == []
