"""The ``platforms.telegram`` section of config.yaml, validated into :class:`TelegramSettings`.

The core keeps a platform's section as the plugin's own business; this
module checks it the way the core checks its own keys: every mistake is one
line naming the file and the key. The token is a secret: it is never part
of an error message or a repr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hermes_gateway import ConfigError

#: The plugin's own keys, plus the core's access keys (the core reads and checks those).
KEYS = ("enabled", "token", "base_url", "poll_timeout", "mode", "webhook_url", "webhook_secret",
        "transport", "charge_drafts", "allowed_chats", "allowed_users", "require_mention")
TOKEN_SHAPE = re.compile(r"^\d+:[A-Za-z0-9_-]{8,}$")
DEFAULT_BASE_URL = "https://api.telegram.org/bot"
MODES = ("polling", "webhook")
#: How previews are shown: edits of a real message, native drafts (private chats only), or drafts where possible.
TRANSPORTS = ("edit", "draft", "auto")
#: What Telegram accepts as ``secret_token`` in setWebhook.
SECRET_SHAPE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


@dataclass(frozen=True)
class TelegramSettings:
    """What the plugin needs to reach one bot."""

    token: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    poll_timeout: int = 30                          # seconds one getUpdates long poll may wait
    mode: str = "polling"                           # or "webhook": updates arrive at POST /webhooks/telegram
    webhook_url: str | None = None                  # the public URL Telegram posts to (setWebhook)
    webhook_secret: str | None = field(default=None, repr=False)  # X-Telegram-Bot-Api-Secret-Token
    transport: str = "edit"                         # previews: "edit", "draft" or "auto" (drafts in private chats)
    charge_drafts: bool = True                      # draft frames take from the chat's budget (Telegram does not say)

    @property
    def webhook(self) -> bool:
        return self.mode == "webhook"


def parse_settings(section: Mapping[str, Any], source: str = "(config)") -> TelegramSettings:
    """Validate ``platforms.telegram``; raises ConfigError (one line, never the token)."""
    key = "platforms.telegram"
    if not isinstance(section, Mapping):
        raise ConfigError(source, key, "a mapping with token (and optionally base_url, poll_timeout)")
    unknown = sorted(str(k) for k in section if k not in KEYS)
    if unknown:
        raise ConfigError(source, f"{key}.{unknown[0]}", f"unknown key; expected one of {', '.join(KEYS)}")
    token = section.get("token")
    if not isinstance(token, str) or not token.strip():
        raise ConfigError(source, f"{key}.token", 'the bot token from @BotFather, e.g. token: "${TELEGRAM_TOKEN}"')
    token = token.strip()
    if not TOKEN_SHAPE.match(token):
        raise ConfigError(source, f"{key}.token",
                          "a bot token shaped like 123456:ABC-DEF... (digits, a colon, then letters); "
                          "the value given is not (not shown: it is a secret)")
    base_url = section.get("base_url", DEFAULT_BASE_URL)
    if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
        raise ConfigError(source, f"{key}.base_url",
                          f"an http(s) URL of a Bot API server ending in /bot, e.g. {DEFAULT_BASE_URL}")
    if token in base_url:
        raise ConfigError(source, f"{key}.base_url", "the server's URL without the token (the plugin adds it)")
    poll_timeout = section.get("poll_timeout", 30)
    if isinstance(poll_timeout, bool) or not isinstance(poll_timeout, int) or not 0 <= poll_timeout <= 300:
        raise ConfigError(source, f"{key}.poll_timeout", "whole seconds from 0 to 300")
    mode = section.get("mode", "polling")
    if mode not in MODES:
        raise ConfigError(source, f"{key}.mode", "polling (getUpdates) or webhook (POST /webhooks/telegram)")
    webhook_url = section.get("webhook_url")
    webhook_secret = section.get("webhook_secret")
    if mode == "webhook":
        if not isinstance(webhook_url, str) or not re.match(r"^https?://[^/\s]+\S*$", webhook_url):
            raise ConfigError(source, f"{key}.webhook_url",
                              "the public http(s) URL Telegram posts updates to, forwarded to this gateway's "
                              "/webhooks/telegram, e.g. https://bot.example.com/webhooks/telegram")
        if token in webhook_url:
            raise ConfigError(source, f"{key}.webhook_url", "a URL without the bot token (it would be logged)")
        if not isinstance(webhook_secret, str) or not SECRET_SHAPE.match(webhook_secret):
            raise ConfigError(source, f"{key}.webhook_secret",
                              "1 to 256 characters A-Z, a-z, 0-9, _ or -, "
                              "e.g. webhook_secret: \"${TELEGRAM_WEBHOOK_SECRET}\" "
                              "(the value given is not shown: it is a secret)")
    else:
        for name, value in (("webhook_url", webhook_url), ("webhook_secret", webhook_secret)):
            if value is not None:
                raise ConfigError(source, f"{key}.{name}", "only with mode: webhook (polling needs no URL)")
    transport = section.get("transport", "edit")
    if transport not in TRANSPORTS:
        raise ConfigError(source, f"{key}.transport",
                          "edit (previews edit one message), draft or auto (native drafts in private chats, "
                          "sendMessageDraft; edits elsewhere)")
    charge_drafts = section.get("charge_drafts", True)
    if not isinstance(charge_drafts, bool):
        raise ConfigError(source, f"{key}.charge_drafts",
                          f"true or false (whether draft frames count against the chat's ~1 message/s budget; "
                          f"default true), got {charge_drafts!r}")
    return TelegramSettings(token=token, base_url=base_url, poll_timeout=poll_timeout, mode=mode,
                            webhook_url=webhook_url, webhook_secret=webhook_secret, transport=transport,
                            charge_drafts=charge_drafts)
