"""The ``platforms.telegram`` section of config.yaml, declared as :class:`TelegramSettings`.

The core parses the section into this dataclass (types, unknown keys with a
did-you-mean, ``${ENV}``), masks the :func:`~hermes_gateway.secret` fields
in ``hermes-gateway config`` and in logs, and reports every mistake as one
line naming the file and the key. What the types cannot say (a token's
shape, a URL's form, "webhook_url only with mode: webhook") is checked in
``__post_init__``; a secret's value is never part of such a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hermes_gateway import SettingsError, secret, setting

TOKEN_SHAPE = re.compile(r"^\d+:[A-Za-z0-9_-]{8,}$")
DEFAULT_BASE_URL = "https://api.telegram.org/bot"
MODES = ("polling", "webhook")
#: How previews are shown: edits of a real message, native drafts (private chats only), or drafts where possible.
TRANSPORTS = ("edit", "draft", "auto")
#: What Telegram accepts as ``secret_token`` in setWebhook.
SECRET_SHAPE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


_TOKEN_HINT = 'the bot token from @BotFather, e.g. token: "${TELEGRAM_TOKEN}"'


@dataclass(frozen=True)
class TelegramSettings:
    """What the plugin needs to reach one bot.

    A missing or empty token gets the line that says where to get one.
    """

    token: str = secret(hint=_TOKEN_HINT)           # from @BotFather; in every Bot API URL
    base_url: str = DEFAULT_BASE_URL                # a Bot API server, ending in /bot (the plugin adds the token)
    base_file_url: str | None = None                # where files people send are downloaded, ending in /file/bot;
                                                    # default: /file/bot on base_url's host (the Bot API's layout)
    poll_timeout: int = setting(30, minimum=0, maximum=300)  # seconds one getUpdates long poll may wait
    mode: Literal["polling", "webhook"] = "polling"  # or updates arrive at POST /webhooks/telegram
    webhook_url: str | None = None                  # the public URL Telegram posts to (setWebhook)
    webhook_secret: str | None = secret(None)       # X-Telegram-Bot-Api-Secret-Token
    transport: Literal["edit", "draft", "auto"] = "edit"  # previews: edits, drafts, or drafts in private chats
    charge_drafts: bool = True                      # draft frames take from the chat's budget (Telegram does not say)

    def __post_init__(self) -> None:
        token = self.token.strip()
        object.__setattr__(self, "token", token)  # frozen: the one normalisation, before anything reads it
        if not token:
            raise SettingsError("token", _TOKEN_HINT)
        if not TOKEN_SHAPE.match(token):
            raise SettingsError("token", "a bot token shaped like 123456:ABC-DEF... (digits, a colon, then "
                                         "letters); the value given is not (not shown: it is a secret)")
        if not re.match(r"^https?://[^/\s]+", self.base_url):
            raise SettingsError("base_url",
                                f"an http(s) URL of a Bot API server ending in /bot, e.g. {DEFAULT_BASE_URL}")
        if token in self.base_url:
            raise SettingsError("base_url", "the server's URL without the token (the plugin adds it)")
        if self.base_file_url is not None:
            if not re.match(r"^https?://[^/\s]+", self.base_file_url):
                raise SettingsError("base_file_url", "an http(s) URL of the Bot API's file server ending in "
                                                     "/file/bot, e.g. https://api.telegram.org/file/bot")
            if token in self.base_file_url:
                raise SettingsError("base_file_url", "the server's URL without the token (the plugin adds it)")
        if self.webhook:
            self._check_webhook(token)
        else:
            for name in ("webhook_url", "webhook_secret"):
                if getattr(self, name) is not None:
                    raise SettingsError(name, "only with mode: webhook (polling needs no URL)")

    def _check_webhook(self, token: str) -> None:
        url = self.webhook_url
        if url is None or not re.match(r"^https?://[^/\s]+\S*$", url):
            raise SettingsError("webhook_url",
                                "the public http(s) URL Telegram posts updates to, forwarded to this gateway's "
                                "/webhooks/telegram, e.g. https://bot.example.com/webhooks/telegram")
        if token in url:
            raise SettingsError("webhook_url", "a URL without the bot token (it would be logged)")
        if self.webhook_secret is None or not SECRET_SHAPE.match(self.webhook_secret):
            raise SettingsError("webhook_secret",
                                "1 to 256 characters A-Z, a-z, 0-9, _ or -, "
                                "e.g. webhook_secret: \"${TELEGRAM_WEBHOOK_SECRET}\" "
                                "(the value given is not shown: it is a secret)")

    @property
    def file_url(self) -> str:
        """Where files are downloaded from (the token follows it): ``base_file_url``, else ``/file/bot`` beside
        ``base_url`` — ``https://api.telegram.org/bot`` downloads from ``https://api.telegram.org/file/bot``."""
        if self.base_file_url is not None:
            return self.base_file_url
        base = self.base_url.rstrip("/")
        if base.endswith("/bot"):
            return base[: -len("/bot")] + "/file/bot"
        match = re.match(r"^https?://[^/\s]+", base)
        assert match is not None  # checked in __post_init__
        return match.group(0) + "/file/bot"

    @property
    def webhook(self) -> bool:
        return self.mode == "webhook"
