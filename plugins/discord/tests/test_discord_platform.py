"""What the plugin declares to the core, and how the core reads platforms.discord into its settings."""

from __future__ import annotations

import pytest

from discord_test_support import TOKEN
from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner, plugins_for
from hermes_discord import DiscordClient, DiscordPlugin, DiscordSettings


def settings_of(section, source="(test)"):
    """The settings the gateway would hand the client for this section (built, never started)."""
    return PlatformRunner(DiscordPlugin(), settings=section, source=source).build().settings


def test_the_platform_declares_discords_limits():
    platform = plugins_for(DiscordPlugin()).platform("discord").platform
    assert (platform.name, platform.max_message_length) == ("discord", 2000)
    budget = platform.budget_for("guild")
    assert budget == platform.budget_for("dm") == platform.budget_for(None)
    assert budget.burst + budget.rate * 5 < 5, "under ~5 message calls per 5 s in a channel"
    bot = platform.bot_budget
    assert bot is not None and bot.burst + bot.rate * 1 <= 50, "under Discord's 50 requests/s per bot"
    assert platform.settings is DiscordSettings and platform.client is not None


def test_calls_that_leave_late_still_stay_under_discords_global_limit():
    """Charged on time, a call leaves when the loop gets to it: on a busy gateway calls charged over a
    little more than a second arrive within one (1,000 replies at once: 15 global 429s with a burst of 10)."""
    bot = plugins_for(DiscordPlugin()).platform("discord").platform.bot_budget
    late = 0.125  # a busy loop's lateness (bench/scale.py --platform discord: event-loop lag p99 150-310 ms)
    assert bot is not None and bot.burst + bot.rate * (1 + late) <= 50


def test_the_factory_builds_a_discord_client_from_the_settings():
    client = PlatformRunner(DiscordPlugin(call_timeout=3.0), settings={"token": TOKEN}).build()
    assert isinstance(client, DiscordClient) and client.settings.token == TOKEN and client.call_timeout == 3.0


def test_settings_from_a_full_section():
    settings = settings_of({"enabled": True, "token": f"  {TOKEN} ", "api_base_url": "http://127.0.0.1:5/api/v10/",
                            "gateway_url": "ws://127.0.0.1:5/ws", "allowed_channels": [123, "456"],
                            "allowed_users": ["7"], "require_mention": False})
    assert settings.token == TOKEN and settings.api_base_url == "http://127.0.0.1:5/api/v10"
    assert settings.gateway_url == "ws://127.0.0.1:5/ws"  # the access keys are the core's: accepted, read there


def test_defaults_are_discords_own():
    settings = settings_of({"token": TOKEN})
    assert settings.api_base_url == "https://discord.com/api/v10" and settings.gateway_url == "wss://gateway.discord.gg"


@pytest.mark.parametrize("section, key, words", [
    ({}, "token", "developer portal"),
    ({"token": ""}, "token", "developer portal"),
    ({"token": "hunter2hunter2"}, "token", "not shown"),
    ({"token": 12345678901234}, "token", "not shown"),
    ({"token": f"Bot {TOKEN}"}, "token", "without the \"Bot \" prefix"),
    ({"token": TOKEN, "api_base_url": "discord.com"}, "api_base_url", "http(s) URL"),
    ({"token": TOKEN, "gateway_url": "https://gateway.discord.gg"}, "gateway_url", "ws(s) URL"),
    ({"token": TOKEN, "api_base_url": f"http://127.0.0.1:5/{TOKEN}"}, "api_base_url", "without the token"),
    ({"token": TOKEN, "tokn": "x"}, "tokn", "unknown key"),
])
def test_a_bad_section_names_the_key_and_never_the_secret(section, key, words):
    with pytest.raises(ConfigError) as caught:
        settings_of(section, source="config.yaml")
    message = str(caught.value)
    assert message.startswith(f"config.yaml: platforms.discord.{key}: ") and words in message
    assert "\n" not in message
    assert "hunter2" not in message and "12345678901234" not in message and TOKEN.split(".")[-1] not in message


def test_an_unknown_key_suggests_the_right_one():
    with pytest.raises(ConfigError, match="did you mean token"):
        settings_of({"token": TOKEN, "tokn": "x"})


def test_the_settings_repr_keeps_the_token_out():
    assert TOKEN.split(".")[-1] not in repr(settings_of({"token": TOKEN}))
