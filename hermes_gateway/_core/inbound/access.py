"""Who may talk to the bot, and when a group message is meant for it.

One mechanism for every platform: ``platforms.<name>.allowed_chats`` and
``allowed_users`` (ids as numbers or strings; a platform's own word such as
Discord's ``allowed_channels`` means the same as ``allowed_chats``), and
``require_mention`` for group chats (default true: a group bot that answers
every line is a nuisance; one-to-one chats are always answered).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import ConfigError
from ..messages.incoming import Incoming

#: Keys a platform section may use for the chat allow-list (the platform's own vocabulary).
CHAT_LIST_KEYS = ("allowed_chats", "allowed_channels")


@dataclass(frozen=True)
class AccessPolicy:
    """The access rules of one platform; ``None`` lists allow everyone."""

    allowed_chats: frozenset[str] | None = None
    allowed_users: frozenset[str] | None = None
    require_mention: bool = True

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None, *, source: str, platform: str) -> "AccessPolicy":
        """Read the access keys of ``platforms.<platform>`` (other keys are the plugin's own)."""
        section = section or {}
        chats: set[str] | None = None
        for key in CHAT_LIST_KEYS:
            if section.get(key) is not None:
                chats = (chats or set()) | _ids(section[key], source, f"platforms.{platform}.{key}")
        users = section.get("allowed_users")
        require = section.get("require_mention", True)
        if not isinstance(require, bool):
            raise ConfigError(source, f"platforms.{platform}.require_mention", f"true or false, got {require!r}")
        return cls(
            allowed_chats=frozenset(chats) if chats is not None else None,
            allowed_users=frozenset(_ids(users, source, f"platforms.{platform}.allowed_users"))
            if users is not None else None,
            require_mention=require,
        )

    def allows(self, incoming: Incoming) -> str | None:
        """None when ``incoming`` may be answered; otherwise why not (for one log line)."""
        refused = self.allows_chat(incoming)
        if refused is not None:
            return refused
        if self.allowed_users is not None and (incoming.sender_id or "") not in self.allowed_users:
            return f"user {incoming.sender_id} is not in allowed_users"
        return None

    def allows_chat(self, incoming: Incoming) -> str | None:
        """The ``allowed_chats`` half of :meth:`allows` (the users are the operator gate's, with pairing)."""
        if self.allowed_chats is not None and incoming.chat_id not in self.allowed_chats:
            # a listed channel covers its threads: a thread id may be what the platform calls the chat
            if incoming.thread_id is None or incoming.thread_id not in self.allowed_chats:
                return f"chat {incoming.chat_id} is not in allowed_chats"
        return None

    def addressed(self, incoming: Incoming, command: str | None) -> bool:
        """Whether a message is meant for the bot: always in a one-to-one chat; in a group when
        mentioned, replied to, or sent a command (``/help``, ``/help@this_bot``) — unless
        ``require_mention`` is off."""
        if incoming.is_direct or not self.require_mention or incoming.mentioned:
            return True
        return command is not None


def _ids(value: Any, source: str, key: str) -> set[str]:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise ConfigError(source, key, f"a list of ids (numbers or strings), got {type(value).__name__}")
    out: set[str] = set()
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, (str, int)) or str(item).strip() == "":
            raise ConfigError(source, f"{key}[{i}]", f"an id (a number or a string), got {item!r}")
        out.add(str(item).strip())
    return out
