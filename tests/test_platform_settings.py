"""A platform's settings are declared as a dataclass and parsed by the core: one line per mistake, secrets hidden."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from hermes_gateway import ConfigError, Platform, SettingsError, secret, setting
from hermes_gateway._core.platform_settings import parse_settings, secret_fields, secret_values


@dataclass(frozen=True, kw_only=True)
class Acme:
    token: str = secret(hint='the bot token, e.g. token: "${ACME_TOKEN}"')
    signing_secret: str | None = secret(None)
    base_url: str = "https://api.acme.example"
    poll_timeout: int = 30
    timeout: float = 10.0
    mode: Literal["polling", "webhook"] = "polling"
    rooms: list[str] = field(default_factory=list)
    greeting: str = setting("hi", hint="a short greeting line")

    def __post_init__(self) -> None:
        if self.mode == "webhook" and not self.signing_secret:
            raise SettingsError("signing_secret", "the signing secret (mode: webhook needs it)")


def parse(section: dict) -> Acme:
    return parse_settings(Acme, section, platform="acme", source="config.yaml")


def error(section: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(section)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_good_section_is_the_dataclass_with_defaults_and_the_core_keys_left_out():
    settings = parse({"token": "tok-123456789", "enabled": True, "allowed_users": [1], "require_mention": False,
                      "home_chat": "42", "allowed_chats": ["a"], "allowed_channels": ["b"], "timeout": 3, "rooms": ["x", "y"]})
    assert settings == Acme(token="tok-123456789", timeout=3.0, rooms=["x", "y"])
    assert isinstance(settings.timeout, float)
    assert "tok-123456789" not in repr(settings)


@pytest.mark.parametrize("section, expected", [
    ({}, 'config.yaml: platforms.acme.token: the bot token, e.g. token: "${ACME_TOKEN}"'),
    ({"token": "t" * 10, "tokne": 1}, "config.yaml: platforms.acme.tokne: unknown key (did you mean token?); the "
                                      "keys are token, signing_secret, base_url, poll_timeout, timeout, mode, rooms, "
                                      "greeting, enabled, allowed_chats, allowed_channels, allowed_users, "
                                      "require_mention, home_chat, platform, rate_limits"),
    ({"token": "t" * 10, "poll_timeout": "30"}, "config.yaml: platforms.acme.poll_timeout: a whole number, got '30'"),
    ({"token": "t" * 10, "poll_timeout": True}, "config.yaml: platforms.acme.poll_timeout: a whole number, got True"),
    ({"token": "t" * 10, "timeout": float("nan")}, "config.yaml: platforms.acme.timeout: a number, got nan"),
    ({"token": "t" * 10, "mode": "push"}, "config.yaml: platforms.acme.mode: one of polling, webhook, got 'push'"),
    ({"token": "t" * 10, "rooms": "x"}, "config.yaml: platforms.acme.rooms: a list of a strings, got 'x'"),
    ({"token": "t" * 10, "base_url": None}, "config.yaml: platforms.acme.base_url: a string, got None"),
    ({"token": "t" * 10, "greeting": 3}, "config.yaml: platforms.acme.greeting: a short greeting line, got 3"),
    ({"token": "t" * 10, "mode": "webhook"},
     "config.yaml: platforms.acme.signing_secret: the signing secret (mode: webhook needs it)"),
])
def test_each_mistake_is_one_line_naming_file_key_and_expectation(section, expected):
    assert error(section) == expected


def test_a_secret_of_the_wrong_type_is_never_shown():
    message = error({"token": 1234567890123, "signing_secret": ["s3cr3t-value"]})
    assert message == "config.yaml: platforms.acme.token: the bot token, e.g. token: \"${ACME_TOKEN}\", " \
                      "(not shown: it is a secret)"
    assert "1234567890123" not in message


def test_the_secret_fields_are_known_by_their_marking_not_by_their_names():
    assert secret_fields(Acme) == ("token", "signing_secret")
    assert secret_values(parse({"token": "tok-123456789", "signing_secret": "sig-987654321"})) == \
        ("tok-123456789", "sig-987654321")


def test_a_platform_refuses_settings_that_are_no_dataclass_or_shadow_a_core_key():
    with pytest.raises(ValueError, match="settings must be a dataclass type"):
        Platform(name="acme", settings=dict)

    @dataclass
    class Shadowing:
        allowed_users: list[str] = field(default_factory=list)

    with pytest.raises(ValueError, match="allowed_users are read by the core"):
        Platform(name="acme", settings=Shadowing)
