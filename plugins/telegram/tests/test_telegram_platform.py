"""What the plugin declares to the core, and how the core reads platforms.telegram into its settings."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway.testing import PlatformRunner, plugins_for
from hermes_telegram import PLATFORM, TelegramClient, TelegramSettings, plugin
from telegram_test_support import TOKEN


def test_the_platform_declares_telegrams_limits():
    platform = plugins_for(plugin).platform("telegram").platform
    assert (platform.name, platform.max_message_length, platform.length_unit) == ("telegram", 4096, "utf16")
    assert platform.edit_interval == 1.0
    assert platform.budget_for("private") == RateBudget(rate=1 / 1.05, burst=1)  # ~1/s, a margin for jitter
    group = RateBudget(rate=20 / 60 / 1.05, burst=3)  # 20/min, 5% under
    assert platform.budget_for("group") == platform.budget_for("supergroup") == group
    assert platform.budget_for("channel") == platform.budget_for(None) == RateBudget(rate=1 / 1.05, burst=1)
    assert platform.bot_budget == RateBudget(rate=30.0, burst=30)  # about 30 messages a second across all chats
    assert platform.settings is TelegramSettings and platform.client is TelegramClient


def test_the_plugin_object_only_registers_the_platform():
    """No startup/shutdown/register_routes hooks, no stream hooks: the client built per gateway does the rest."""
    hooks = {name for name in dir(plugin) if hasattr(getattr(plugin, name), "hermes_gateway_impl")}
    assert hooks == {"register_platforms"}
    registered = []
    plugin.register_platforms(registered.append)
    assert registered == [PLATFORM]


def settings_from(section, source="config.yaml"):
    """``platforms.telegram`` parsed by the core, as the gateway parses it."""
    return PlatformRunner(plugin, section, source=source, start=False).build().settings


def test_settings_from_a_full_section():
    settings = settings_from({"enabled": True, "token": f"  {TOKEN} ", "base_url": "http://127.0.0.1:8081/bot",
                              "allowed_chats": [42, "-100123", "@channel"], "poll_timeout": 10})
    assert settings.token == TOKEN and settings.base_url == "http://127.0.0.1:8081/bot"
    assert settings.poll_timeout == 10  # allowed_chats is the core's key: accepted beside ours, read by the core
    assert not hasattr(settings, "allowed_chats")


@pytest.mark.parametrize("section, key, words", [
    ({}, "token", "@BotFather"),
    ({"token": ""}, "token", "@BotFather"),
    ({"token": "hunter2hunter2"}, "token", "not shown"),
    ({"token": 12345678}, "token", "not shown"),
    ({"token": TOKEN, "base_url": f"https://api.telegram.org/bot{TOKEN}"}, "base_url", "without the token"),
    ({"token": TOKEN, "poll_timeout": 1000}, "poll_timeout", "0 to 300"),
    ({"token": TOKEN, "poll_timeout": "30"}, "poll_timeout", "a whole number"),
    ({"token": TOKEN, "tokn": "x"}, "tokn", "unknown key"),
])
def test_a_bad_section_names_the_key_and_never_the_secret(section, key, words):
    with pytest.raises(ConfigError) as caught:
        settings_from(section)
    message = str(caught.value)
    assert message.startswith(f"config.yaml: platforms.telegram.{key}: ") and words in message
    assert "\n" not in message
    assert "hunter2" not in message and TOKEN.split(":")[1] not in message and "12345678" not in message
