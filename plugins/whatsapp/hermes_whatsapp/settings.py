"""The ``platforms.whatsapp`` section of config.yaml, validated into :class:`WhatsAppSettings`.

Every mistake is one line naming the file and the key. The access token,
the app secret and the verify token are secrets: never part of an error
message or a repr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hermes_gateway import ConfigError

from .redaction import MIN_SECRET

#: The plugin's own keys, plus the core's access keys (the core reads and checks those).
KEYS = ("enabled", "access_token", "phone_number_id", "app_secret", "verify_token", "api_base_url", "timeout",
        "allowed_chats", "allowed_users", "require_mention")
DEFAULT_API_BASE_URL = "https://graph.facebook.com/v21.0"
SECRET_KEYS = ("access_token", "app_secret", "verify_token")
_HINTS = {
    "access_token": 'the Cloud API access token (a system user token), e.g. access_token: "${WHATSAPP_TOKEN}"',
    "app_secret": 'the Meta app\'s secret, which signs every webhook, e.g. app_secret: "${WHATSAPP_APP_SECRET}"',
    "verify_token": 'the token you typed into the webhook set-up, e.g. verify_token: "${WHATSAPP_VERIFY_TOKEN}"',
}


@dataclass(frozen=True)
class WhatsAppSettings:
    """What the plugin needs to send from one business phone number and check its webhooks."""

    access_token: str = field(repr=False)
    phone_number_id: str
    app_secret: str = field(repr=False)
    verify_token: str = field(repr=False)
    api_base_url: str = DEFAULT_API_BASE_URL
    timeout: float = 20.0                     # seconds one Graph API call may take

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.access_token, self.app_secret, self.verify_token)


def parse_settings(section: Mapping[str, Any], source: str = "(config)") -> WhatsAppSettings:
    """Validate ``platforms.whatsapp``; raises ConfigError (one line, never a secret)."""
    key = "platforms.whatsapp"
    if not isinstance(section, Mapping):
        raise ConfigError(source, key, "a mapping with access_token, phone_number_id, app_secret, verify_token")
    unknown = sorted(str(k) for k in section if k not in KEYS)
    if unknown:
        raise ConfigError(source, f"{key}.{unknown[0]}", f"unknown key; expected one of {', '.join(KEYS)}")
    secrets = {}
    for name in SECRET_KEYS:
        value = section.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(source, f"{key}.{name}", _HINTS[name])
        if any(c.isspace() for c in value.strip()) or len(value.strip()) < MIN_SECRET:
            raise ConfigError(source, f"{key}.{name}",
                              f"one word of at least {MIN_SECRET} characters, no spaces (not shown: it is a secret)")
        secrets[name] = value.strip()
    phone = section.get("phone_number_id")
    if isinstance(phone, int) and not isinstance(phone, bool):
        phone = str(phone)  # YAML reads an unquoted id as a number; it is an id, not a quantity
    if not isinstance(phone, str) or not re.fullmatch(r"\d{5,20}", phone.strip()):
        raise ConfigError(source, f"{key}.phone_number_id",
                          'the Phone number ID from the app\'s WhatsApp set-up (digits, not the phone number '
                          'itself), e.g. phone_number_id: "1234567890"')
    base = section.get("api_base_url", DEFAULT_API_BASE_URL)
    if not isinstance(base, str) or not re.match(r"^https?://[^/\s]+(/\S*)?$", base):
        raise ConfigError(source, f"{key}.api_base_url",
                          f"an http(s) URL of the Graph API with its version, e.g. {DEFAULT_API_BASE_URL}")
    if any(secret in base for secret in secrets.values()):
        raise ConfigError(source, f"{key}.api_base_url", "the server's URL without a token in it")
    timeout = section.get("timeout", 20.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 1 <= timeout <= 300:
        raise ConfigError(source, f"{key}.timeout", "seconds from 1 to 300 that one Graph API call may take")
    return WhatsAppSettings(phone_number_id=phone.strip(), api_base_url=base.rstrip("/"), timeout=float(timeout),
                            **secrets)
