"""``web.*`` in config.yaml: when the console is on, the password kept secret, bad values in one line."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway._core.cli.config_cmd import effective
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError

PASSWORD = "a-long-console-password"


def web_enabled(data: dict) -> bool:
    return parse_config(data, env={}).web_enabled


@pytest.mark.parametrize("data, on", [
    ({}, True),                                                             # loopback listener: on
    ({"api_server": {"host": "0.0.0.0"}}, False),                          # reachable, nobody can sign in: off
    ({"api_server": {"host": "0.0.0.0", "api_keys": ["sk-abcdefgh1"]}}, True),  # an API key signs in
    ({"api_server": {"host": "0.0.0.0"}, "web": {"password": PASSWORD}}, True),
    ({"api_server": {"enabled": False}}, False),                           # no listener of its own
    ({"web": {"enabled": False}}, False),
    ({"api_server": {"host": "0.0.0.0"}, "web": {"enabled": True}}, True),  # said so: on, sign-in impossible
    ({"api_server": {"host": "::1"}}, True),
    ({"api_server": {"host": "localhost"}}, True),
])
def test_the_console_is_on_by_default_for_a_loopback_listener_only(data, on):
    assert web_enabled(data) is on


def test_the_web_chat_platform_follows_the_console():
    assert parse_config({}, env={}).platform_enabled("web")
    assert not parse_config({"web": {"enabled": False}}, env={}).platform_enabled("web")
    assert not parse_config({"platforms": {"web": {"enabled": False}}}, env={}).platform_enabled("web")


def test_the_web_chat_streams_fast_by_default_and_streaming_web_overrides_it():
    cfg = parse_config({}, env={})
    assert not cfg.streaming_for("telegram").enabled
    web = cfg.streaming_for("web")
    assert web.enabled and web.edit_interval <= 0.1 and web.min_tokens == 1
    slow = parse_config({"streaming": {"web": {"enabled": False, "edit_interval": 2}}}, env={}).streaming_for("web")
    assert not slow.enabled and slow.edit_interval == 2


def test_the_password_is_masked_by_config_and_in_every_log_line(caplog):
    cfg = parse_config({"web": {"password": PASSWORD}}, env={})
    shown = effective(cfg)["web"]
    assert shown["password"] != PASSWORD and PASSWORD not in str(effective(cfg)) and shown["enabled"] is True
    assert PASSWORD not in repr(cfg.web)
    with caplog.at_level(logging.INFO):
        logging.getLogger("hermes_gateway.test").info("signing in with %s", PASSWORD)
    assert PASSWORD not in caplog.text and "<password>" in caplog.text


@pytest.mark.parametrize("section, key, expected", [
    ({"enabled": "sometimes"}, "web.enabled", "true or false"),
    ({"password": 12345678}, "web.password", "a string"),
    ({"password": "short"}, "web.password", "at least 8 characters"),
    ({"session_hours": 0}, "web.session_hours", "from 0.01 to 8,760"),
    ({"session_hours": "long"}, "web.session_hours", "a number"),
    ({"pasword": PASSWORD}, "web.pasword", "did you mean password"),
    ("on", "web", "a mapping"),
    ({"trusted_proxies": ["127.0.0.1", "nginx"]}, "web.trusted_proxies[1]", "an IP address or a network"),
    ({"trusted_proxies": "10.0.0.0/33"}, "web.trusted_proxies[0]", "an IP address or a network"),
    ({"trusted_proxies": [""]}, "web.trusted_proxies[0]", "a non-empty string"),
    ({"trusted_proxies": {"a": 1}}, "web.trusted_proxies", "a list"),
])
def test_a_bad_value_is_one_line_naming_file_key_and_expectation(section, key, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config({"web": section}, source="config.yaml", env={})
    text = str(caught.value)
    assert "\n" not in text and "config.yaml" in text and key in text and expected in text, text


def test_trusted_proxies_are_addresses_or_networks_kept_normalised():
    cfg = parse_config({"web": {"trusted_proxies": ["127.0.0.1", "10.1.2.3/8", "::1"]}}, env={})
    assert cfg.web.trusted_proxies == ("127.0.0.1/32", "10.0.0.0/8", "::1/128")
    assert parse_config({}, env={}).web.trusted_proxies == ()
