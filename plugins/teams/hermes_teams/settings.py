"""The ``platforms.teams`` section of config.yaml, declared as :class:`TeamsSettings`.

The core parses the section into it (types, ``${ENV}``, unknown keys with a
did-you-mean, one line naming the file and the key) and masks the one
secret, ``app_password`` (the Azure bot's client secret), everywhere. The
three endpoint URLs default to Microsoft's public cloud and exist so a test
(or a sovereign cloud) can point them elsewhere: the token service the bot
asks for its outbound token, the OpenID metadata whose JWKS signs inbound
activities, and the issuer those tokens carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_gateway import SettingsError, secret, setting

#: Client-credentials token endpoint of the multi-tenant Bot Framework (bot-docs, connector authentication).
DEFAULT_TOKEN_URL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
#: The Bot Framework's OpenID metadata; its ``jwks_uri`` holds the keys that sign inbound activities.
DEFAULT_OPENID_METADATA_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
DEFAULT_ISSUER = "https://api.botframework.com"
DEFAULT_SCOPE = "https://api.botframework.com/.default"
DEFAULT_PATH = "/api/messages"
_URL = re.compile(r"^https?://[^/\s]+")
_APP_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{2,63}$")


@dataclass(frozen=True, kw_only=True)
class TeamsSettings:
    """What the plugin needs to be one Azure bot registered for Teams.

    ``app_id``/``app_password``: the bot's Microsoft App ID and client secret
    (Azure portal > the bot > Configuration). ``tenant_id``: set for a
    single-tenant bot (its token then comes from that tenant); leave it out
    for a multi-tenant bot. ``path``: the messaging endpoint on the gateway's
    listener. ``native_streaming``: stream replies in personal chats with
    Teams' streaming protocol (else they are posted and updated, as in
    channels). ``max_body_bytes``: an inbound activity larger than this is
    refused with 413 (Teams' own messages are at most ~100 KB).
    """

    app_id: str
    app_password: str = secret(hint='the bot\'s client secret, e.g. app_password: "${TEAMS_APP_PASSWORD}"')
    tenant_id: str | None = None
    path: str = DEFAULT_PATH
    native_streaming: bool = True
    token_url: str = DEFAULT_TOKEN_URL
    openid_metadata_url: str = DEFAULT_OPENID_METADATA_URL
    issuer: str = DEFAULT_ISSUER
    scope: str = DEFAULT_SCOPE
    service_url: str = "https://smba.trafficmanager.net/teams/"
    api_timeout: float = setting(30.0, minimum=0.1, maximum=600)
    max_body_bytes: int = setting(262_144, minimum=1024, maximum=4_194_304)

    def __post_init__(self) -> None:
        app_id = self.app_id.strip()
        if not _APP_ID.match(app_id):
            raise SettingsError("app_id", "the bot's Microsoft App ID (a GUID), e.g. app_id: "
                                          "00000000-0000-0000-0000-000000000000")
        object.__setattr__(self, "app_id", app_id)
        if not self.app_password.strip():
            raise SettingsError("app_password", "the bot's client secret (not shown: it is a secret)")
        object.__setattr__(self, "app_password", self.app_password.strip())
        if not self.path.startswith("/") or " " in self.path:
            raise SettingsError("path", f"a URL path starting with /, e.g. {DEFAULT_PATH}")
        if self.tenant_id is not None and not re.fullmatch(r"[0-9A-Za-z.-]{3,}", self.tenant_id):
            raise SettingsError("tenant_id", "the tenant's id (a GUID) or domain, or leave it out for a "
                                             "multi-tenant bot")
        for key in ("token_url", "openid_metadata_url", "issuer", "service_url"):
            if not _URL.match(getattr(self, key)):
                raise SettingsError(key, "an http(s) URL")
        if self.tenant_id and self.token_url == DEFAULT_TOKEN_URL:
            object.__setattr__(self, "token_url", DEFAULT_TOKEN_URL.replace("botframework.com", self.tenant_id))

    @property
    def bot_id(self) -> str:
        """The bot's account id in Teams conversations (``28:<app id>``)."""
        return f"28:{self.app_id}"
