"""The Telegram platform plugin: what it declares to the core, and nothing else.

:data:`PLATFORM` holds Telegram's limits (budgets, lengths, media, what a
split must not cut, what Telegram counts), the settings type of
``platforms.telegram`` and the client factory. :class:`TelegramPlugin` is
the plugin object the entry point registers: its one hook registers
:data:`PLATFORM`. The gateway builds a fresh :class:`~.client.TelegramClient`
per run from the parsed settings, so the plugin object itself holds no
state and two gateways in one process share nothing.
"""

from __future__ import annotations

from typing import Any, Mapping

import hermes_gateway
from hermes_gateway import Platform, RateBudget

from . import media as attachments
from .client import NAME, TelegramClient
from .doctor import doctor
from .measure import keep_whole_ranges, rendered_length
from .settings import TelegramSettings

MAX_MESSAGE_UNITS = 4096
EDIT_INTERVAL = 1.0
#: Telegram's Bot FAQ: about one message a second in a chat, 20 a minute in a group; 5% under both,
#: because calls spaced exactly at the limit arrive a few ms closer (network jitter), which a strict
#: limiter answers with 429 (seen in bench_telegram_streaming.py).
MARGIN = 1.05
BUDGETS: Mapping[str, RateBudget] = {
    "private": RateBudget(rate=1 / MARGIN, burst=1),
    "group": RateBudget(rate=20 / 60 / MARGIN, burst=3),
    "supergroup": RateBudget(rate=20 / 60 / MARGIN, burst=3),
    "default": RateBudget(rate=1 / MARGIN, burst=1),
}
#: ... and about 30 messages a second across all chats of one bot.
BOT_BUDGET = RateBudget(rate=30.0, burst=30)


PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_UNITS, length_unit="utf16", edit_interval=EDIT_INTERVAL,
    budgets=BUDGETS, bot_budget=BOT_BUDGET, keep_whole=keep_whole_ranges, rendered_length=rendered_length,
    media=attachments.LIMITS, description="Telegram Bot API (python-telegram-bot)",
    settings=TelegramSettings, client=TelegramClient, doctor=doctor,
)


class TelegramPlugin:
    """The plugin object: registers :data:`PLATFORM` (the client does the rest, one per gateway)."""

    def __init__(self) -> None:
        self.__name__ = "hermes_telegram"  # the plugin's name in `hermes-gateway plugins` and in errors

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Any) -> None:
        register(PLATFORM)
