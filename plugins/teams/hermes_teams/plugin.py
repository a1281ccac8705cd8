"""The Teams platform as hermes-gateway sees it: its limits, its settings, and the client that runs it.

Limits (msteams-platform ``bots/how-to/rate-limit.md``, per bot per
conversation: 7 sends/1 s, 8/2 s, 60/30 s, 1800/3600 s — the long window is
0.5/s, the budget below with a burst of 5 stays inside all four; updates
are assumed to count as sends). Native streaming in personal chats allows
one request per second and advises buffering 1.5–2 s between updates
(``bots/streaming-ux.md``): the private budget is one per 1.5 s. A
bot message is at most ~100 KB counted as UTF-16 (keep under 80 KB:
``agent-message-size-limit.md``): 40,000 UTF-16 code units.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import hermes_gateway
from hermes_gateway import MediaLimits, Platform, RateBudget, rewrite_tables, utf16_length

from .client import TeamsClient
from .doctor import doctor
from .settings import TeamsSettings

NAME = "teams"
MAX_MESSAGE_LENGTH = 40_000
BUDGETS: Mapping[str, RateBudget] = {
    "default": RateBudget(rate=0.5, burst=5),
    "private": RateBudget(rate=1 / 1.5, burst=1),
}
#: Inline images (base64 in the message; not counted in the 100 KB text limit). 1 MiB is this plugin's own
#: bound, not a documented Teams number.
MEDIA = MediaLimits(kinds=frozenset({"image"}), max_bytes={"image": 1_048_576}, caption_length=4000)


def rendered_length(text: str) -> int:
    return utf16_length(rewrite_tables(text, style="markdown"))


PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_LENGTH, length_unit="utf16", edit_interval=1.0,
    budgets=BUDGETS, append_only=True, media=MEDIA, rendered_length=rendered_length,
    keep_whole=hermes_gateway.markdown_keep_whole,
    description="Microsoft Teams (Bot Framework activities on microsoft-teams-api; native streaming in "
                "personal chats)",
    settings=TeamsSettings, client=TeamsClient, doctor=doctor,
)


class TeamsPlugin:
    """Registers the Teams platform; that is its only hook."""

    __name__ = "hermes_teams"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Callable[[Platform], Any]) -> None:
        register(PLATFORM)
