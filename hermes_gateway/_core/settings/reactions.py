"""``reactions: {received, done, failed}``: which emoji marks each moment of a message (all off by default).

A key left out or null means no reaction at that moment. A platform that
accepts only a fixed list of emoji (Telegram's 73) says so with a
``reaction_emoji`` attribute on its client; the configured emoji are checked
against it when the client is built, so a reaction the platform would refuse
is a one-line config error at start, not a failed call per message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection

from ..errors import ConfigError

#: The moments a message can be marked, in the order they happen.
STAGES = ("received", "done", "failed")
#: Variation selector 16: "❤️" is "❤" + this; a platform's list may hold either form.
VS16 = "\ufe0f"


@dataclass(frozen=True)
class ReactionSettings:
    """The emoji per moment; None = no reaction then. All None (the default) = reactions off."""

    received: str | None = None
    done: str | None = None
    failed: str | None = None

    @property
    def enabled(self) -> bool:
        return any((self.received, self.done, self.failed))

    def emoji(self, stage: str) -> str | None:
        return getattr(self, stage)


def parse_reactions(parser: Any, value: Any) -> ReactionSettings:
    """The ``reactions:`` section (``parser`` is the config's ``_Parser``: one-line errors naming the key)."""
    section = parser.section(value, "reactions", STAGES)
    found: dict[str, str | None] = {}
    for stage in STAGES:
        emoji = parser.get(section, "reactions", stage, "str", None)
        if emoji is not None:
            emoji = emoji.strip()
            if not emoji or len(emoji) > 16 or any(c.isspace() for c in emoji):
                raise parser.fail(f"reactions.{stage}", f"one emoji or null, got {emoji!r}")
        found[stage] = emoji or None
    return ReactionSettings(**found)


def platform_form(emoji: str, allowed: Collection[str]) -> str | None:
    """``emoji`` as the platform's list spells it (with or without VS16), or None if it is not there."""
    for candidate in (emoji, emoji.replace(VS16, ""), emoji + VS16):
        if candidate in allowed:
            return candidate
    return None


def check_platform_emoji(settings: ReactionSettings, platform: str, client: Any, *, source: str) -> None:
    """Refuse at start an emoji the platform's fixed list lacks (the client's ``reaction_emoji``), in one line."""
    allowed = getattr(client, "reaction_emoji", None)
    if not settings.enabled or allowed is None or not callable(getattr(client, "react", None)):
        return
    for stage in STAGES:
        emoji = settings.emoji(stage)
        if emoji is not None and platform_form(emoji, allowed) is None:
            sample = " ".join(sorted(allowed)[:12])
            raise ConfigError(source, f"reactions.{stage}",
                              f"an emoji {platform} accepts as a reaction (e.g. {sample} …; "
                              f"👀 👍 😢 🤔 ⚡ 👌 🎉 work), got {emoji!r}")
