"""The Slack platform as hermes-gateway sees it: its limits, its settings, and the client that runs it.

:data:`PLATFORM` is everything the core needs to know: the pacing and
length limits below, :class:`~.settings.SlackSettings` (the core parses
``platforms.slack`` into it) and :class:`~.client.SlackClient` (built per
gateway from those settings and a :class:`~hermes_gateway.PlatformContext`).
:class:`SlackPlugin` registers it; the ``hermes_gateway`` entry point is
one instance of it, ``hermes_slack.plugin``, and holds no state: each
gateway gets a client of its own.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import hermes_gateway
from hermes_gateway import Platform, RateBudget, markdown_keep_whole

from . import files, formatting
from .client import SlackClient
from .doctor import doctor
from .settings import SlackSettings

NAME = "slack"
#: ``chat.update`` refuses more, and it is the repair path of an expired native stream: one limit for both.
MAX_MESSAGE_CHARS = 4000
EDIT_INTERVAL = 1.0
#: About one message a second in a channel.
BUDGETS: Mapping[str, RateBudget] = {"default": RateBudget(rate=1.0, burst=1)}
#: ``chat.update`` is ~50/min per workspace, every channel together (Tier 3), so that is the bot's budget.
#: chat.startStream (~20/min per workspace) is kept within its limit by the client (.starts): a reply
#: that would be one start too many uses chat.postMessage + chat.update instead.
BOT_BUDGET = RateBudget(rate=50 / 60, burst=5)

PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_CHARS, length_unit="chars", edit_interval=EDIT_INTERVAL,
    budgets=BUDGETS, bot_budget=BOT_BUDGET, append_only=True, media=files.LIMITS,
    description="Slack (slack-bolt, Socket Mode or Events API; native AI streaming in threads)",
    settings=SlackSettings, client=SlackClient, rendered_length=formatting.rendered_length,
    keep_whole=markdown_keep_whole, doctor=doctor,
)


class SlackPlugin:
    """Registers the Slack platform; that is its only hook (everything else is the client's)."""

    __name__ = "hermes_slack"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Callable[[Platform], Any]) -> None:
        register(PLATFORM)
