"""``platforms.slack`` as a person writes it: defaults, normalisation, and one-line errors that never show a secret."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_slack import parse_settings
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET


def test_socket_mode_is_the_default_with_native_streaming_on_auto():
    settings = parse_settings({"enabled": True, "bot_token": f" {BOT_TOKEN} ", "app_token": APP_TOKEN,
                               "allowed_chats": ["C1"], "allowed_users": ["U1"], "require_mention": False})
    assert (settings.mode, settings.native_streaming, settings.api_base_url) == \
        ("socket", "auto", "https://slack.com/api/")
    assert settings.bot_token == BOT_TOKEN, "surrounding spaces from an env file are dropped"


def test_http_mode_needs_the_signing_secret_not_the_app_token():
    settings = parse_settings({"bot_token": BOT_TOKEN, "mode": "http", "signing_secret": SIGNING_SECRET,
                               "api_base_url": "http://127.0.0.1:5/api", "native_streaming": False})
    assert settings.app_token is None and settings.api_base_url == "http://127.0.0.1:5/api/"
    assert settings.native_streaming == "off", "YAML's `off` arrives as false"


@pytest.mark.parametrize("section, key, words", [
    ([], "platforms.slack", "a mapping"),
    ({"bot_token": APP_TOKEN, "app_token": APP_TOKEN}, "platforms.slack.bot_token", "xoxb-"),
    ({"bot_token": BOT_TOKEN, "app_token": BOT_TOKEN}, "platforms.slack.app_token", "xapp-"),
    ({"bot_token": BOT_TOKEN, "mode": "http", "signing_secret": "short!"}, "platforms.slack.signing_secret",
     "signing secret"),
    ({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": "slack.com/api"},
     "platforms.slack.api_base_url", "http(s) URL"),
])
def test_mistakes_are_one_line_naming_the_key(section, key, words):
    with pytest.raises(ConfigError) as caught:
        parse_settings(section, source="config.yaml")
    message = str(caught.value)
    assert message.startswith(f"config.yaml: {key}: ") and words in message and "\n" not in message
    for secret in (BOT_TOKEN, APP_TOKEN):
        assert secret not in message
