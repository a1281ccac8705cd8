"""The Signal platform as hermes-gateway sees it: its limits, its settings, and the client that runs it.

Where each number comes from (also in the README):

- 2000 UTF-8 bytes per message: signal-cli's ``MAX_MESSAGE_SIZE_BYTES``; past
  it the text is cut and the whole uploaded as a long-text attachment, and
  each edit of such a message would upload again.
- Edits: 10 per message (Signal-Android ``MAX_EDIT_COUNT``, Signal-Desktop
  ``MESSAGE_MAX_EDIT_COUNT``), kept by :mod:`.outbound`; ``edit_interval``
  2 s so a reply of a minute needs no more than its budget before the end.
- Rate budgets: Signal publishes none (its server answers 413/429 with a
  Retry-After, which signal-cli reports as -5): one message a second per chat,
  bursts of 3, and 3 a second for the account, cautious guesses.
- Files: up to 100 MB each (the official apps' limit, unverified; signal-cli
  accepts 150 MiB), sent as ``data:`` URIs.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import hermes_gateway
from hermes_gateway import MediaLimits, Platform, RateBudget

from .client import SignalClient, rendered_length
from .doctor import doctor
from .settings import SignalSettings

NAME = "signal"
MAX_MESSAGE_BYTES = 2000
EDIT_INTERVAL = 2.0
BUDGETS: Mapping[str, RateBudget] = {"default": RateBudget(rate=1.0, burst=3)}
BOT_BUDGET = RateBudget(rate=3.0, burst=6)
MAX_FILE_BYTES = 100 * 1000 * 1000
MEDIA = MediaLimits(kinds=frozenset({"image", "document", "audio", "video"}),
                    max_bytes={"default": MAX_FILE_BYTES}, caption_length=MAX_MESSAGE_BYTES)

PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_BYTES, length_unit="bytes", edit_interval=EDIT_INTERVAL,
    budgets=BUDGETS, bot_budget=BOT_BUDGET, media=MEDIA, typing_interval=10.0,
    description="Signal (a signal-cli daemon's JSON-RPC over HTTP; replies streamed by message edits)",
    settings=SignalSettings, client=SignalClient, doctor=doctor, rendered_length=rendered_length,
)


class SignalPlugin:
    """Registers the Signal platform; that is its only hook (everything else is the client's)."""

    __name__ = "hermes_signal"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Callable[[Platform], Any]) -> None:
        register(PLATFORM)
