"""The Discord platform as the core sees it: its limits, its settings, and how to build its client.

:class:`DiscordPlugin` holds no state of its own: its one hook registers
the ``discord`` :class:`~hermes_gateway.Platform`, whose ``client`` factory
builds a fresh :class:`~.client.DiscordClient` for every gateway from the
parsed ``platforms.discord`` section (:class:`~.settings.DiscordSettings`).
The entry point registers one instance with Discord's own limits; a bot
that only posts in boosted servers, or a test, makes its own
(``DiscordPlugin(upload_limit=...)``, shorter waits).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping

from hermes_gateway import Platform, RateBudget, hookimpl, markdown_keep_whole

from . import formatting
from . import media as attachments
from .client import CALL_TIMEOUT, DiscordClient, Tuning
from .doctor import doctor
from .receiving import NAME
from .settings import DiscordSettings

#: Discord's content limit. Declared in UTF-16 units: never more than 2000 characters however
#: Discord counts them, at the cost of a little room in emoji-heavy text.
MAX_MESSAGE_UNITS = 2000
EDIT_INTERVAL = 1.25
#: Peers observe about 5 message calls per 5 s per channel. 1 + 0.75 x 5 < 5: at most 4 calls in any
#: 5 s, so a channel's bucket never empties (discord.py would then wait for its reset inside the call).
CHANNEL_BUDGET = RateBudget(rate=0.75, burst=1)
BUDGETS: Mapping[str, RateBudget] = {"default": CHANNEL_BUDGET}
#: Discord's global limit is 50 requests per second per bot, counted as they arrive. A call leaves a
#: little after the core charges it (the loop runs it later), so calls charged over a little more than a
#: second can arrive within one: 5 + 40 x 1.125 = 50, room for calls up to 125 ms late. (A burst of 10,
#: exactly 50 in any second of charges, met 15 global 429s with 1,000 replies at once: bench/scale.py.)
BOT_BUDGET = RateBudget(rate=40.0, burst=5)


class DiscordPlugin:
    """Registers the ``discord`` platform; each gateway gets its own client from :attr:`platform`'s factory."""

    def __init__(self, *, upload_limit: int = attachments.UPLOAD_LIMIT, guild_ready_timeout: float = 2.0,
                 ready_timeout: float = 30.0, call_timeout: float = CALL_TIMEOUT,
                 upload_timeout: float = attachments.UPLOAD_TIMEOUT) -> None:
        """``upload_limit`` is the largest file sent (10 MiB: servers without boosts); the waits are
        those of :class:`~.client.Tuning`, handed to every client built."""
        self.tuning = Tuning(guild_ready_timeout=guild_ready_timeout, ready_timeout=ready_timeout,
                             call_timeout=call_timeout, upload_timeout=upload_timeout)
        self.platform = Platform(
            name=NAME, max_message_length=MAX_MESSAGE_UNITS, length_unit="utf16", edit_interval=EDIT_INTERVAL,
            budgets=dict(BUDGETS), bot_budget=BOT_BUDGET, description="Discord (discord.py)",
            media=attachments.limits(upload_limit), settings=DiscordSettings,
            client=partial(DiscordClient, tuning=self.tuning), rendered_length=formatting.rendered_length,
            keep_whole=markdown_keep_whole, doctor=doctor,
        )
        self.__name__ = "hermes_discord"

    @hookimpl
    def register_platforms(self, register: Any) -> None:
        register(self.platform)
