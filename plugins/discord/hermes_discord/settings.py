"""The ``platforms.discord`` section of config.yaml, validated into :class:`DiscordSettings`.

Every mistake is one line naming the file and the key; the token is a
secret and never part of an error message or a repr. The access keys
(``allowed_channels``/``allowed_chats``, ``allowed_users``,
``require_mention``) are accepted here and read by the core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hermes_gateway import ConfigError

KEYS = ("enabled", "token", "api_base_url", "gateway_url", "allowed_channels", "allowed_chats", "allowed_users",
        "require_mention")
#: A bot token: three dot-separated base64url parts (user id, timestamp, HMAC).
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg"


@dataclass(frozen=True)
class DiscordSettings:
    """What the plugin needs to reach one bot."""

    token: str = field(repr=False)
    api_base_url: str = DEFAULT_API_BASE_URL
    gateway_url: str = DEFAULT_GATEWAY_URL


def parse_settings(section: Mapping[str, Any], source: str = "(config)") -> DiscordSettings:
    """Validate ``platforms.discord``; raises ConfigError (one line, never the token)."""
    key = "platforms.discord"
    if not isinstance(section, Mapping):
        raise ConfigError(source, key, "a mapping with token (and optionally allowed_channels, require_mention)")
    unknown = sorted(str(k) for k in section if k not in KEYS)
    if unknown:
        raise ConfigError(source, f"{key}.{unknown[0]}", f"unknown key; expected one of {', '.join(KEYS)}")
    token = section.get("token")
    if not isinstance(token, str) or not token.strip():
        raise ConfigError(source, f"{key}.token",
                          'the bot token from the Discord developer portal, e.g. token: "${DISCORD_TOKEN}"')
    token = token.strip()
    if token.lower().startswith("bot "):
        raise ConfigError(source, f"{key}.token", 'the token alone, without the "Bot " prefix (not shown: it is a secret)')
    if not TOKEN_SHAPE.match(token):
        raise ConfigError(source, f"{key}.token",
                          "a bot token shaped like three dot-separated parts (MTA...xyz.Gabc12.secret...); "
                          "the value given is not (not shown: it is a secret)")
    api = section.get("api_base_url", DEFAULT_API_BASE_URL)
    if not isinstance(api, str) or not re.match(r"^https?://[^/\s]+(/\S*)?$", api):
        raise ConfigError(source, f"{key}.api_base_url", f"an http(s) URL of the REST API, e.g. {DEFAULT_API_BASE_URL}")
    gateway = section.get("gateway_url", DEFAULT_GATEWAY_URL)
    if not isinstance(gateway, str) or not re.match(r"^wss?://[^/\s]+(/\S*)?$", gateway):
        raise ConfigError(source, f"{key}.gateway_url", f"a ws(s) URL of the gateway, e.g. {DEFAULT_GATEWAY_URL}")
    if token in api or token in gateway:
        raise ConfigError(source, f"{key}.api_base_url", "a URL without the token (the plugin sends it in a header)")
    return DiscordSettings(token=token, api_base_url=api.rstrip("/"), gateway_url=gateway)
