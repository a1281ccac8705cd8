"""The Mattermost platform as hermes-gateway sees it: its limits, its settings, and the client that runs it.

Where the numbers come from (``/work/shared/PLATFORM_FACTS.md``, from the
mattermost/mattermost server source): a post holds 16,383 runes
(``PostMessageMaxRunesV2``; the live value is the server's ``MaxPostSize``,
which the client reads at start). Mattermost has no per-channel limit; its
rate limiter (off by default; when on, ``PerSec`` 10 and ``MaxBurst`` 100
per token or address) limits the whole bot, so the bot's budget stays under
10 calls a second, and each channel gets about one edit a second (every
edit is broadcast to everyone in the channel). Files: ``MaxFileSize``
defaults to 100 MiB.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import hermes_gateway
from hermes_gateway import Platform, RateBudget, markdown_keep_whole

from . import files
from .client import MAX_POST_RUNES, MattermostClient
from .doctor import doctor
from .settings import MattermostSettings

NAME = "mattermost"
EDIT_INTERVAL = 1.0
BUDGETS: Mapping[str, RateBudget] = {"default": RateBudget(rate=1.0, burst=3)}
BOT_BUDGET = RateBudget(rate=8.0, burst=10)

PLATFORM = Platform(
    name=NAME, max_message_length=MAX_POST_RUNES, length_unit="chars", edit_interval=EDIT_INTERVAL,
    budgets=BUDGETS, bot_budget=BOT_BUDGET, media=files.LIMITS, keep_whole=markdown_keep_whole,
    description="Mattermost (REST v4 + websocket; replies streamed by editing the post, threads, buttons)",
    settings=MattermostSettings, client=MattermostClient, doctor=doctor, command_prefix="!",
)


class MattermostPlugin:
    """Registers the Mattermost platform; that is its only hook (everything else is the client's)."""

    __name__ = "hermes_mattermost"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Callable[[Platform], Any]) -> None:
        register(PLATFORM)
