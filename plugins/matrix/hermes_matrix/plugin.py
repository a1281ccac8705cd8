"""The Matrix platform as hermes-gateway sees it: its limits, its settings, and the client that runs it.

**Length.** ``length_unit="bytes"``: Matrix limits an event to 65,536 bytes,
so the core measures UTF-8; :data:`~.formatting.MAX_MESSAGE_BYTES` (15,000)
keeps a whole edit — text twice, its JSON escaping, the envelope — under
it (derivation in :mod:`.formatting`).

**Pace.** Synapse's defaults (``rc_message``: 0.2 events a second, burst 10,
``synapse/config/ratelimiting.py``) count every event the bot sends, in
any room: a message, each edit, each reaction. That is the bot's budget
and each room's. A homeserver that exempts its bot (Synapse's admin API
``override_ratelimit``) lets the operator raise them:
``platforms.matrix.rate_limits: {default: {rate: 10, burst: 20}, bot: {rate: 20, burst: 40}}``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import hermes_gateway
from hermes_gateway import Platform, RateBudget, markdown_keep_whole

from . import formatting, media
from .client import MatrixClient
from .doctor import doctor
from .settings import MatrixSettings

NAME = "matrix"
#: Synapse's default ``rc_message`` (per_second 0.2, burst_count 10).
SYNAPSE_RC_MESSAGE = RateBudget(rate=0.2, burst=10)
BUDGETS: Mapping[str, RateBudget] = {"default": SYNAPSE_RC_MESSAGE, "private": SYNAPSE_RC_MESSAGE,
                                     "group": SYNAPSE_RC_MESSAGE}
BOT_BUDGET = SYNAPSE_RC_MESSAGE
EDIT_INTERVAL = 1.0

PLATFORM = Platform(
    name=NAME, max_message_length=formatting.MAX_MESSAGE_BYTES, length_unit="bytes", edit_interval=EDIT_INTERVAL,
    budgets=BUDGETS, bot_budget=BOT_BUDGET, media=media.LIMITS,
    description="Matrix (mautrix; replies streamed by m.replace edits; unencrypted rooms)",
    settings=MatrixSettings, client=MatrixClient, rendered_length=formatting.rendered_length,
    keep_whole=markdown_keep_whole, doctor=doctor, command_prefix="!",
)


class MatrixPlugin:
    """Registers the Matrix platform; that is its only hook (everything else is the client's)."""

    __name__ = "hermes_matrix"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Callable[[Platform], Any]) -> None:
        register(PLATFORM)
