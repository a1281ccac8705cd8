"""``platforms.slack`` as a person writes it, parsed by the core into ``SlackSettings``: defaults,
normalisation, and one-line errors that never show a secret."""

from __future__ import annotations

import dataclasses

import pytest

from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_slack import SlackSettings, plugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET


def parsed(section):
    """The settings the client of ``section`` is built with, parsed as the gateway parses them."""
    return PlatformRunner(plugin, settings=section, start=False, source="config.yaml").build().settings


def test_socket_mode_is_the_default_with_native_streaming_on_auto():
    settings = parsed({"enabled": True, "bot_token": f" {BOT_TOKEN} ", "app_token": APP_TOKEN,
                       "allowed_chats": ["C1"], "allowed_users": ["U1"], "require_mention": False})
    assert (settings.mode, settings.native_streaming, settings.api_base_url) == \
        ("socket", "auto", "https://slack.com/api/")
    assert settings.bot_token == BOT_TOKEN, "surrounding spaces from an env file are dropped"
    assert (settings.api_timeout, settings.start_streams_per_minute) == (None, 20)


def test_http_mode_needs_the_signing_secret_not_the_app_token():
    settings = parsed({"bot_token": BOT_TOKEN, "mode": "http", "signing_secret": SIGNING_SECRET,
                       "api_base_url": "http://127.0.0.1:5/api", "native_streaming": False})
    assert settings.app_token is None and settings.api_base_url == "http://127.0.0.1:5/api/"
    assert settings.native_streaming == "off", "YAML's `off` arrives as false"


def test_the_three_secrets_are_secret_fields_and_nothing_else_is():
    """The core masks exactly these in `hermes-gateway config` and in logs, and leaves them out of reprs."""
    secret = {f.name for f in dataclasses.fields(SlackSettings) if not f.repr}
    assert secret == {"bot_token", "app_token", "signing_secret"}


@pytest.mark.parametrize("section, key, words", [
    ({"bot_token": APP_TOKEN, "app_token": APP_TOKEN}, "platforms.slack.bot_token", "xoxb-"),
    ({"bot_token": BOT_TOKEN, "app_token": BOT_TOKEN}, "platforms.slack.app_token", "xapp-"),
    ({"bot_token": BOT_TOKEN}, "platforms.slack.app_token", "SLACK_APP_TOKEN"),
    ({"bot_token": BOT_TOKEN, "mode": "http", "signing_secret": "short!"}, "platforms.slack.signing_secret",
     "signing secret"),
    ({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": "slack.com/api"},
     "platforms.slack.api_base_url", "http(s) URL"),
    ({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_timeout": 0}, "platforms.slack.api_timeout",
     "a number from 0.001 to 3,600"),
    ({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "start_streams_per_minute": 0},
     "platforms.slack.start_streams_per_minute", "a whole number from 1 to 10,000"),
    ({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "bot_tokne": BOT_TOKEN}, "platforms.slack.bot_tokne",
     "did you mean bot_token"),
    ({"bot_token": 1234567890123, "app_token": APP_TOKEN}, "platforms.slack.bot_token", "xoxb-"),
    ({"app_token": APP_TOKEN}, "platforms.slack.bot_token", "SLACK_BOT_TOKEN"),
])
def test_mistakes_are_one_line_naming_the_key(section, key, words):
    with pytest.raises(ConfigError) as caught:
        parsed(section)
    message = str(caught.value)
    assert message.startswith(f"config.yaml: {key}: ") and words in message and "\n" not in message
    for secret in (BOT_TOKEN, APP_TOKEN, "1234567890123"):
        assert secret not in message


def test_a_section_that_is_not_a_mapping_is_one_line():
    with pytest.raises(ConfigError) as caught:
        TestGateway({"platforms": {"slack": []}}, plugin)
    assert str(caught.value).startswith("(test config): platforms.slack: a mapping")
