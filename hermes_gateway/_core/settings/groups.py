"""``groups:`` of config.yaml: what the gateway hears in a group besides what is addressed to it (issue 38).

``context_messages``/``context_chars``: how much of the room's recent
conversation (the messages not addressed to the bot) is kept and given to
the model when the bot is addressed; 0 messages (the default) keeps none.
``bots``: what a message from another bot gets (``ignore``, the default, or
``mentions``: answered only when it mentions this bot); ``max_bot_turns``:
the loop guard, bot-to-bot replies allowed per chat per
:data:`BOT_TURN_WINDOW` seconds.

The same four keys may be set per chat in an ``overrides:`` entry
(``groups: {...}``); :func:`parse_group_keys` parses both, so a key has one
range wherever it is written. Like the other feature sections, this module
does not import the config module at run time (the config module imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: The top-level key of config.yaml this module parses.
GROUPS_KEY = "groups"
#: What a message from another bot gets.
BOT_POLICIES = ("ignore", "mentions")
#: The keys of ``groups:`` (and of an override's ``groups:``).
GROUP_KEYS = ("context_messages", "context_chars", "bots", "max_bot_turns")
#: The loop guard's window: at most ``max_bot_turns`` bot-to-bot replies per chat in this many seconds.
BOT_TURN_WINDOW = 600.0
#: The most messages a room's context may keep (each costs a row and a line in the model's input).
MAX_CONTEXT_MESSAGES = 500
#: The most characters a room's context may hold (about 25k tokens: more drowns the person's question).
MAX_CONTEXT_CHARS = 100_000


@dataclass(frozen=True)
class GroupSettings:
    """``groups:`` as parsed; an override may replace any of the four for its chats."""

    context_messages: int = 0          # 0: no room context is kept (the default)
    context_chars: int = 4000
    bots: str = "ignore"
    max_bot_turns: int = 3

    @property
    def keeps_context(self) -> bool:
        return self.context_messages > 0 and self.context_chars > 0


def parse_group_keys(p: Any, value: Any, key: str) -> dict[str, Any]:
    """The keys written under ``key`` (``groups`` or ``overrides[i].groups``), validated, unwritten ones left out.

    ``p`` is the config's parser: one-line errors naming the file, the key and the range; every number is
    registered in the schema of numbers even when not written (the settings tests walk it).
    """
    sec = p.section(value, key, GROUP_KEYS)
    found = {
        "context_messages": p.get(sec, key, "context_messages", "int", None, minimum=0,
                                  maximum=MAX_CONTEXT_MESSAGES),
        "context_chars": p.get(sec, key, "context_chars", "int", None, minimum=0, maximum=MAX_CONTEXT_CHARS),
        "bots": p.get(sec, key, "bots", "str", None, choices=BOT_POLICIES),
        "max_bot_turns": p.get(sec, key, "max_bot_turns", "int", None, minimum=0, maximum=1000),
    }
    return {name: v for name, v in found.items() if v is not None}


def parse_groups(p: Any, value: Any) -> GroupSettings:
    """The ``groups:`` section (absent: the defaults, room context off and other bots ignored)."""
    return GroupSettings(**parse_group_keys(p, value, GROUPS_KEY))


def with_overrides(settings: GroupSettings, values: Mapping[str, Any]) -> GroupSettings:
    """``settings`` with what an override gave (``values``: ``{"groups.context_messages": 5, ...}``)."""
    changed = {name: values[f"{GROUPS_KEY}.{name}"] for name in GROUP_KEYS if f"{GROUPS_KEY}.{name}" in values}
    if not changed:
        return settings
    from dataclasses import replace

    return replace(settings, **changed)
