"""The ``platforms.slack`` section of config.yaml, declared as :class:`SlackSettings`.

The core parses the section into it (types, ``${ENV}``, unknown keys with a
did-you-mean, one line naming the file and the key) and masks the three
secrets everywhere: ``bot_token``, ``app_token`` and ``signing_secret`` are
:func:`~hermes_gateway.secret` fields. What the types cannot say is checked
in ``__post_init__``: a token's prefix, the app token that Socket Mode needs,
the signing secret that the Events API needs, and the Web API's URL. Each
check raises :class:`~hermes_gateway.SettingsError`, which never quotes a
secret. The core's own keys (``enabled``, ``allowed_chats``,
``allowed_users``, ``require_mention``) are not fields: the core reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hermes_gateway import SettingsError, secret, setting

from .starts import START_STREAMS_PER_MINUTE

DEFAULT_API_BASE_URL = "https://slack.com/api/"


@dataclass(frozen=True)
class SlackSettings:
    """What the plugin needs to reach one Slack app (one workspace).

    ``mode``: ``socket`` (Socket Mode, no public URL; needs ``app_token``) or
    ``http`` (the Events API on the gateway's listener; needs
    ``signing_secret``). ``native_streaming``: ``auto`` streams replies in
    threads with Slack's AI streaming when the workspace allows it, ``off``
    always posts and edits (YAML's bare ``off`` arrives as false and means
    the same). ``api_timeout``: seconds one Web API call may take (default:
    aiohttp's five minutes, which a large upload may need).
    ``start_streams_per_minute``: how many native streams this process may
    start in a minute (Slack's limit is about 20 per workspace; with several
    replicas on one app, give each its share).
    """

    bot_token: str = secret(hint='the bot token (xoxb-...) from the app\'s OAuth page, e.g. bot_token: "${SLACK_BOT_TOKEN}"')
    mode: Literal["socket", "http"] = "socket"
    app_token: str | None = secret(None)
    signing_secret: str | None = secret(None)
    native_streaming: Literal["auto", "off", False] = "auto"
    api_base_url: str = DEFAULT_API_BASE_URL
    api_timeout: float | None = setting(None, minimum=0.001, maximum=3600)
    start_streams_per_minute: int = setting(START_STREAMS_PER_MINUTE, minimum=1, maximum=10_000)

    def __post_init__(self) -> None:
        # surrounding spaces (an env file's) are not part of a token: dropped before anything is checked
        self._set("bot_token", _token(self.bot_token, "bot_token", "xoxb-"))
        if self.app_token is None and self.mode == "socket":
            raise SettingsError("app_token", 'a xapp-… token, e.g. app_token: "${SLACK_APP_TOKEN}"')
        if self.app_token is not None:
            self._set("app_token", _token(self.app_token, "app_token", "xapp-"))
        if self.signing_secret is None and self.mode == "http":
            raise SettingsError("signing_secret", 'the app\'s signing secret (http mode), '
                                                  'e.g. signing_secret: "${SLACK_SIGNING_SECRET}"')
        if self.signing_secret is not None:
            if not re.fullmatch(r"[0-9A-Za-z]{16,}", self.signing_secret.strip()):
                raise SettingsError("signing_secret", "the signing secret from the app's Basic Information page "
                                                      "(letters and digits); the value given is not "
                                                      "(not shown: it is a secret)")
            self._set("signing_secret", self.signing_secret.strip())
        # YAML's `off` is False, and a Literal check admits 0 (0 == False): every falsy value is "off"
        native = "off" if not self.native_streaming else self.native_streaming
        if native not in ("auto", "off"):
            raise SettingsError("native_streaming", f"auto or off, got {native!r}")
        self._set("native_streaming", native)
        if not re.match(r"^https?://[^/\s]+", self.api_base_url):
            raise SettingsError("api_base_url", f"an http(s) URL of the Web API, e.g. {DEFAULT_API_BASE_URL}")
        if not self.api_base_url.endswith("/"):
            self._set("api_base_url", self.api_base_url + "/")

    @property
    def native(self) -> bool:
        """Whether native streaming may be tried (``native_streaming: auto``)."""
        return self.native_streaming == "auto"

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)  # a frozen dataclass normalising its own fields


def _token(value: str, key: str, prefix: str) -> str:
    value = value.strip()
    if not value.startswith(prefix) or len(value) < len(prefix) + 8:
        raise SettingsError(key, f"a token starting with {prefix}; the value given is not "
                                 "(not shown: it is a secret)")
    return value
