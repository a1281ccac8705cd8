"""``platforms.whatsapp``: every mistake is one line naming the key, and no secret is ever in it."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner
from hermes_whatsapp import plugin
from hermes_whatsapp.settings import DEFAULT_API_BASE_URL
from whatsapp_test_support import APP_SECRET, PHONE_ID, SECRETS, TOKEN, VERIFY_TOKEN


def parse_settings(section, source="config.yaml"):
    """The section parsed by the core, as the gateway parses it: the client's settings."""
    return PlatformRunner(plugin, section, source=source).build().settings

GOOD = {"enabled": True, "access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": APP_SECRET,
        "verify_token": VERIFY_TOKEN}


def test_the_issue_example_is_accepted_with_the_core_access_keys():
    settings = parse_settings({**GOOD, "allowed_users": ["4915112345678"], "allowed_chats": None,
                               "require_mention": False}, source="config.yaml")
    assert settings.phone_number_id == PHONE_ID and settings.api_base_url == DEFAULT_API_BASE_URL
    assert not any(secret in repr(settings) for secret in SECRETS)


def test_an_unquoted_phone_number_id_is_still_a_string():
    assert parse_settings({**GOOD, "phone_number_id": int(PHONE_ID)}).phone_number_id == PHONE_ID


def test_the_base_url_loses_its_trailing_slash():
    assert parse_settings({**GOOD, "api_base_url": "http://127.0.0.1:8080/v21.0/"}).api_base_url == \
        "http://127.0.0.1:8080/v21.0"


@pytest.mark.parametrize("change, key", [
    ({"access_token": None}, "access_token"),
    ({"access_token": "  "}, "access_token"),
    ({"app_secret": None}, "app_secret"),
    ({"verify_token": "short"}, "verify_token"),
    ({"verify_token": "has a space in it"}, "verify_token"),
    ({"phone_number_id": "+49 151 12345678"}, "phone_number_id"),
    ({"phone_number_id": None}, "phone_number_id"),
    ({"phone_number_id": True}, "phone_number_id"),
    ({"api_base_url": "graph.facebook.com"}, "api_base_url"),
    ({"api_base_url": f"https://graph.facebook.com/v21.0?access_token={TOKEN}"}, "api_base_url"),
    ({"timeout": 0}, "timeout"),
    ({"webhook_path": "/x"}, "webhook_path"),
    ({"acess_token": TOKEN}, "acess_token"),
])
def test_a_mistake_is_one_line_naming_the_key(change, key):
    section = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as caught:
        parse_settings(section, source="config.yaml")
    message = str(caught.value)
    assert message.startswith(f"config.yaml: platforms.whatsapp.{key}: ")
    assert "\n" not in message
    assert not any(secret in message for secret in SECRETS), message

