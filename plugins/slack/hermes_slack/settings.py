"""The ``platforms.slack`` section of config.yaml, validated into :class:`SlackSettings`.

Every mistake is one line naming the file and the key; tokens and the
signing secret never appear in an error or a repr. The core's access keys
(``allowed_chats``, ``allowed_users``, ``require_mention``) are accepted
here and left to the core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hermes_gateway import ConfigError

KEYS = ("enabled", "bot_token", "mode", "app_token", "signing_secret", "native_streaming", "api_base_url",
        "allowed_chats", "allowed_users", "require_mention")
MODES = ("socket", "http")
NATIVE = ("auto", "off")
DEFAULT_API_BASE_URL = "https://slack.com/api/"


@dataclass(frozen=True)
class SlackSettings:
    """What the plugin needs to reach one Slack app."""

    bot_token: str = field(repr=False)
    mode: str = "socket"
    app_token: str | None = field(default=None, repr=False)
    signing_secret: str | None = field(default=None, repr=False)
    native_streaming: str = "auto"
    api_base_url: str = DEFAULT_API_BASE_URL

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.bot_token, self.app_token, self.signing_secret) if s)


def parse_settings(section: Mapping[str, Any], source: str = "(config)") -> SlackSettings:
    """Validate ``platforms.slack``; raises ConfigError (one line, never a secret)."""
    key = "platforms.slack"
    if not isinstance(section, Mapping):
        raise ConfigError(source, key, "a mapping with bot_token and app_token (socket mode) or signing_secret (http)")
    unknown = sorted(str(k) for k in section if k not in KEYS)
    if unknown:
        raise ConfigError(source, f"{key}.{unknown[0]}", f"unknown key; expected one of {', '.join(KEYS)}")
    mode = section.get("mode", "socket")
    if mode not in MODES:
        raise ConfigError(source, f"{key}.mode", f"socket or http, got {mode!r}")
    bot_token = _token(section, "bot_token", "xoxb-", source, required=True)
    app_token = _token(section, "app_token", "xapp-", source, required=mode == "socket")
    secret = section.get("signing_secret")
    if mode == "http" and secret is None:
        raise ConfigError(source, f"{key}.signing_secret",
                          'the app\'s signing secret (http mode), e.g. signing_secret: "${SLACK_SIGNING_SECRET}"')
    if secret is not None and (not isinstance(secret, str) or not re.fullmatch(r"[0-9A-Za-z]{16,}", secret.strip())):
        raise ConfigError(source, f"{key}.signing_secret",
                          "the signing secret from the app's Basic Information page (letters and digits); "
                          "the value given is not (not shown: it is a secret)")
    native = section.get("native_streaming", "auto")
    if native is False:
        native = "off"
    if native not in NATIVE:
        raise ConfigError(source, f"{key}.native_streaming", f"auto or off, got {native!r}")
    base = section.get("api_base_url", DEFAULT_API_BASE_URL)
    if not isinstance(base, str) or not re.match(r"^https?://[^/\s]+", base):
        raise ConfigError(source, f"{key}.api_base_url", f"an http(s) URL of the Web API, e.g. {DEFAULT_API_BASE_URL}")
    if not base.endswith("/"):
        base += "/"
    return SlackSettings(bot_token=bot_token, mode=mode, app_token=app_token,
                         signing_secret=secret.strip() if isinstance(secret, str) else None,
                         native_streaming=native, api_base_url=base)


def _token(section: Mapping[str, Any], name: str, prefix: str, source: str, *, required: bool) -> Any:
    value = section.get(name)
    key = f"platforms.slack.{name}"
    if value is None:
        if required:
            env = "SLACK_BOT_TOKEN" if name == "bot_token" else "SLACK_APP_TOKEN"
            raise ConfigError(source, key, f'a {prefix}… token, e.g. {name}: "${{{env}}}"')
        return None
    if not isinstance(value, str) or not value.strip().startswith(prefix) or len(value.strip()) < len(prefix) + 8:
        raise ConfigError(source, key, f"a token starting with {prefix}; the value given is not "
                                       "(not shown: it is a secret)")
    return value.strip()
