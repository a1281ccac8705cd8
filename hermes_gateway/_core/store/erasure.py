"""``hermes-gateway forget``: what "a person's data" is in the store, the same for every backend.

A person is ``platform`` + ``user_id`` (``telegram:42``). Their chats are
the ones their id names (a private chat: Telegram's chat id is the user's
id), plus every chat their usage records or a pairing code name (a Discord
or Slack DM has an id of its own). A chat in which the usage records show
someone else too is shared (a group): its conversations are kept, since
they are other people's as well, and only the person's own records in it go
(usage, pairing, approval); :class:`Forgotten` names such chats so the
operator can decide. Everything of their own chats goes: conversations and
their messages, replies in flight, the chat's /model and /persona
settings, reminders, usage records; and what they said in any group that
was kept as the room's context. Stored media files the deleted
messages referenced are returned for the caller to delete (files are not
part of the transaction; the rows go first, so a file is never referenced
by a row that survives).

The SQL backends run :func:`plan` in one transaction; the statement list is
shared so SQLite and PostgreSQL forget exactly the same things.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

#: The key of a stored text part that stands in for a file in the media directory (content.file_content's).
FILE_KEY = "hermes_file"


@dataclass(frozen=True)
class Forgotten:
    """What ``forget`` deleted: rows per kind, the media files the deleted messages referenced, the chats kept."""

    counts: dict[str, int] = field(default_factory=dict)
    media: tuple[str, ...] = ()
    shared_chats: tuple[str, ...] = ()   # chats with other people in them: their conversations were kept


def own_chats(user_id: str, candidates: Iterable[str], shared: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the person's own chats, the shared ones) from the chats that name them and those where others spoke."""
    names = sorted({user_id, *candidates})
    others = set(shared)
    return [c for c in names if c not in others], [c for c in names if c in others]


def media_paths(messages: Iterable[str]) -> list[str]:
    """The stored files (paths) that encoded chat messages reference, in order, each once."""
    found: dict[str, None] = {}
    for text in messages:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        found.update((ref["path"], None) for ref in media_refs(message))
    return list(found)


def media_refs(message: Any) -> list[dict[str, str]]:
    """The stored files one chat message references: ``{"path", "kind"}`` each (``export`` writes them)."""
    content = message.get("content") if isinstance(message, dict) else None
    refs = []
    for part in content if isinstance(content, list) else ():
        file = part.get(FILE_KEY) if isinstance(part, dict) else None
        if not isinstance(file, dict):
            continue
        path = file.get("path")
        if isinstance(path, str) and path:
            refs.append({"path": path, "kind": str(file.get("kind") or "file")})
    return refs


def queries(prefix: str, ph: str) -> dict[str, str]:
    """The statements of a forget, with the backend's table prefix and placeholder (``?`` or ``%s``)."""
    t = {name: prefix + name for name in ("conversations", "messages", "replies_in_flight", "chat_settings",
                                          "reminders", "usage", "approved_users", "pairing_codes", "room_context")}
    in_chat = f"platform = {ph} AND chat_id = {ph}"
    conversations = f"SELECT id FROM {t['conversations']} WHERE {in_chat}"
    return {
        "candidates": f"SELECT DISTINCT chat_id FROM {t['usage']} WHERE platform = {ph} AND user_id = {ph} "
                      f"UNION SELECT chat_id FROM {t['pairing_codes']} WHERE platform = {ph} AND user_id = {ph}",
        "others": f"SELECT DISTINCT chat_id FROM {t['usage']} WHERE platform = {ph} AND user_id <> {ph}",
        "media": f"SELECT message FROM {t['messages']} WHERE conversation_id IN ({conversations})",
        # (what, statement with the chat's two parameters), in an order the foreign keys allow
        "messages": f"DELETE FROM {t['messages']} WHERE conversation_id IN ({conversations})",
        "conversations": f"DELETE FROM {t['conversations']} WHERE {in_chat}",
        "replies in flight": f"DELETE FROM {t['replies_in_flight']} WHERE {in_chat}",
        "chat settings": f"DELETE FROM {t['chat_settings']} WHERE {in_chat}",
        "reminders": f"DELETE FROM {t['reminders']} WHERE {in_chat}",
        "usage records": f"DELETE FROM {t['usage']} WHERE {in_chat}",
        # the person's own records anywhere (their parameters: platform, user id)
        "usage records ": f"DELETE FROM {t['usage']} WHERE platform = {ph} AND user_id = {ph}",
        "approvals": f"DELETE FROM {t['approved_users']} WHERE platform = {ph} AND user_id = {ph}",
        "pairing codes": f"DELETE FROM {t['pairing_codes']} WHERE platform = {ph} AND user_id = {ph}",
        # what they said in groups, kept as the room's context (issue 38), wherever it is
        "room context": f"DELETE FROM {t['room_context']} WHERE platform = {ph} AND sender_id = {ph}",
    }


#: The per-chat deletions, in order (messages before their conversations).
PER_CHAT = ("messages", "conversations", "replies in flight", "chat settings", "reminders", "usage records")
#: The per-person deletions (``"usage records "``: the person's usage in shared chats, counted with the rest).
PER_PERSON = ("usage records ", "approvals", "pairing codes", "room context")


def add(counts: dict[str, Any], what: str, rows: int) -> None:
    """Count ``rows`` under ``what`` (the trailing space of the per-person usage key folded away)."""
    what = what.strip()
    counts[what] = counts.get(what, 0) + max(rows, 0)
