"""The ``platforms.discord`` section of config.yaml, declared as :class:`DiscordSettings`.

The core parses the section into it (types, unknown keys with a
did-you-mean, one line naming the file and the key) and masks the token
everywhere, since it is a :func:`~hermes_gateway.secret` field. What the
types cannot say (a token's shape, a URL's scheme) is checked in
``__post_init__``; the token is never part of an error message or a repr.
The access keys (``allowed_chats`` or Discord's word for it,
``allowed_channels``, ``allowed_users``, ``require_mention``) are the
core's and not fields here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from hermes_gateway import SettingsError, secret

#: A bot token: three dot-separated base64url parts (user id, timestamp, HMAC).
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
DEFAULT_API_BASE_URL = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg"
_HTTP_URL = re.compile(r"^https?://[^/\s]+(/\S*)?$")
_WS_URL = re.compile(r"^wss?://[^/\s]+(/\S*)?$")


@dataclass(frozen=True)
class DiscordSettings:
    """What the plugin needs to reach one bot.

    A missing token gets the same helpful line as an empty one (the hint;
    ``__post_init__`` refuses an empty one).
    """

    token: str = secret(hint='the bot token from the Discord developer portal, e.g. token: "${DISCORD_TOKEN}"')
    api_base_url: str = DEFAULT_API_BASE_URL
    gateway_url: str = DEFAULT_GATEWAY_URL

    def __post_init__(self) -> None:
        token = self.token.strip()
        if not token:
            raise SettingsError("token", 'the bot token from the Discord developer portal, e.g. token: "${DISCORD_TOKEN}"')
        if token.lower().startswith("bot "):
            raise SettingsError("token", 'the token alone, without the "Bot " prefix (not shown: it is a secret)')
        if not TOKEN_SHAPE.match(token):
            raise SettingsError("token", "a bot token shaped like three dot-separated parts (MTA...xyz.Gabc12.secret...); "
                                         "the value given is not (not shown: it is a secret)")
        if not _HTTP_URL.match(self.api_base_url):
            raise SettingsError("api_base_url", f"an http(s) URL of the REST API, e.g. {DEFAULT_API_BASE_URL}")
        if not _WS_URL.match(self.gateway_url):
            raise SettingsError("gateway_url", f"a ws(s) URL of the gateway, e.g. {DEFAULT_GATEWAY_URL}")
        if token in self.api_base_url or token in self.gateway_url:
            raise SettingsError("api_base_url", "a URL without the token (the plugin sends it in a header)")
        # frozen: the normalised values replace what was written (surrounding spaces, a trailing slash)
        object.__setattr__(self, "token", token)
        object.__setattr__(self, "api_base_url", self.api_base_url.rstrip("/"))
