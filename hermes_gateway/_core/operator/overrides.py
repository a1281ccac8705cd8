"""``overrides:``: settings for some chats, by platform, chat, thread, user or chat kind.

Every matching entry applies, setting by setting, from the least specific to
the most specific, so the most specific entry that sets a value wins and a
broader one still supplies what it does not set. Specificity is the sum of
the weights of the keys an entry matches on (``user`` 16, ``thread`` 8,
``chat`` 4, ``chat_kind`` 2, ``platform`` 1): one user beats one chat,
which beats a chat kind. Among equally specific entries the later one wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..messages.incoming import DIRECT_KINDS
from ..settings.operator import Override


@dataclass(frozen=True)
class Overridden:
    """The settings the matching overrides give one chat, each with the entry that gave it."""

    values: Mapping[str, Any] = field(default_factory=dict)   # model, system_prompt, persona, tools_allow, ...
    origins: Mapping[str, str] = field(default_factory=dict)  # setting -> "overrides[2]"

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


NOTHING = Overridden()


def kind_word(chat_kind: str | None) -> str | None:
    """A platform's chat kind as ``match.chat_kind`` says it: ``private`` (one person) or ``group``."""
    if chat_kind is None:
        return None
    return "private" if chat_kind in DIRECT_KINDS else "group"


def matching(overrides: tuple[Override, ...], platform: str, chat: str | None, thread: str | None = None,
             user: str | None = None, chat_kind: str | None = None) -> list[Override]:
    """The entries that match, least specific first (later entries after earlier ones of equal rank)."""
    kind = kind_word(chat_kind)
    found = [o for o in overrides if o.matches(platform, chat, thread, user, kind)]
    return sorted(found, key=lambda o: (o.specificity, o.index))


def overridden(config: Any, platform: str, chat: str | None, thread: str | None = None, user: str | None = None,
               chat_kind: str | None = None) -> Overridden:
    """The layered settings of every matching entry (:data:`NOTHING` when none matches)."""
    entries = matching(config.operator.overrides, platform, chat, thread, user, chat_kind)
    if not entries:
        return NOTHING
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for entry in entries:
        where = f"{config.source} (overrides[{entry.index}])"
        for name in ("model", "system_prompt", "persona", "tools_allow", "busy"):
            value = getattr(entry, name)
            if value is not None:
                values[name], origins[name] = value, where
        if entry.tools_deny:
            values["tools_deny"], origins["tools_deny"] = entry.tools_deny, where
        for name, value in entry.streaming.items():
            values[f"streaming.{name}"], origins[f"streaming.{name}"] = value, where
        for name, value in entry.groups.items():
            values[f"groups.{name}"], origins[f"groups.{name}"] = value, where
    return Overridden(values, origins)


def for_incoming(config: Any, incoming: Any) -> Overridden:
    return overridden(config, incoming.platform, incoming.chat_id, incoming.thread_id, incoming.sender_id,
                      incoming.chat_kind)
