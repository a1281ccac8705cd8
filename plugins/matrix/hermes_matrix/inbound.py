"""One timeline event from ``/sync``, as the core sees it: an ``Incoming``, a press of a choice, or nothing.

Everything here reads a homeserver's JSON, which may be anything: an event
that is not the shape the spec gives is skipped with one log line naming
its room and what was wrong (:class:`Malformed`), and never stops the sync.
What is taken: ``m.room.message`` from someone else (``m.text``,
``m.emote``; files as attachments; ``m.notice`` is what bots send, so it is
never answered: two bots would answer each other forever), a person's
edit of one (``m.replace``: ``edit_of`` the original), and ``m.reaction``
(an answer to a question with buttons, :mod:`.choices`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from hermes_gateway import Attachment, Incoming, location_text

#: ``msgtype`` → the core's kind of attachment.
FILE_KINDS = {"m.image": "image", "m.file": "document", "m.audio": "audio", "m.video": "video"}
#: Text longer than this (characters) is not a chat message (Synapse caps an event at 64 KiB anyway).
MAX_TEXT = 65_536


class Malformed(ValueError):
    """An event not shaped as the spec says: skipped, in one line."""


@dataclass(frozen=True)
class Reaction:
    """Someone's ``m.reaction`` with ``key`` on the event ``target`` in ``room``."""

    room: str
    sender: str
    target: str
    key: str


def _str(value: Any, what: str, *, limit: int = 1024) -> str:
    if not isinstance(value, str) or not value or len(value) > limit:
        raise Malformed(f"{what} is not a string")
    return value


def strip_reply_fallback(body: str) -> str:
    """A reply's ``body`` without the quoted ``> `` lines older clients put before it."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


class EventReader:
    """Turns one room's timeline events into what the core takes, for the bot ``user_id``.

    ``is_direct(room)`` tells a direct chat from a room; ``sent_by_bot(event_id)``
    whether an event is one of the bot's (a reply to it is a mention);
    ``attachment(kind, content)`` builds a file's lazy download (:mod:`.media`).
    """

    def __init__(self, platform: str, user_id: str, *, is_direct: Callable[[str], bool],
                 sent_by_bot: Callable[[str], bool], attachment: Callable[[str, dict[str, Any]], Attachment]) -> None:
        self.platform = platform
        self.user_id = user_id
        self.localpart = user_id[1:].split(":", 1)[0]
        self.is_direct = is_direct
        self.sent_by_bot = sent_by_bot
        self.attachment = attachment
        self._pill = re.compile(r"matrix\.to/#/" + re.escape(user_id).replace("@", "(?:@|%40)"), re.IGNORECASE)

    def read(self, room: str, event: Any) -> Incoming | Reaction | None:
        """What ``event`` is for the core; None for events it does not take; :class:`Malformed` if broken."""
        if not isinstance(event, dict):
            raise Malformed("an event that is not an object")
        kind = event.get("type")
        if kind not in ("m.room.message", "m.reaction"):
            return None
        if "state_key" in event:
            return None
        sender = _str(event.get("sender"), "sender", limit=255)
        if sender == self.user_id:
            return None
        event_id = _str(event.get("event_id"), "event_id", limit=255)
        content = event.get("content")
        if not isinstance(content, dict):
            raise Malformed(f"{event_id}: content is not an object")
        if not content:
            return None  # redacted
        relation = content.get("m.relates_to")
        if relation is not None and not isinstance(relation, dict):
            raise Malformed(f"{event_id}: m.relates_to is not an object")
        if kind == "m.reaction":
            if not relation or relation.get("rel_type") != "m.annotation":
                return None
            return Reaction(room, sender, _str(relation.get("event_id"), "the reaction's event_id", limit=255),
                            _str(relation.get("key"), "the reaction's key", limit=64))
        edit_of = None
        if relation and relation.get("rel_type") == "m.replace":
            edit_of = _str(relation.get("event_id"), "the edit's event_id", limit=255)
            content = content.get("m.new_content")
            if not isinstance(content, dict):
                raise Malformed(f"{event_id}: an edit without m.new_content")
        return self._message(room, sender, event_id, content, relation, edit_of)

    def _message(self, room: str, sender: str, event_id: str, content: dict[str, Any],
                 relation: dict[str, Any] | None, edit_of: str | None) -> Incoming | None:
        msgtype = content.get("msgtype")
        if msgtype == "m.notice":
            return None
        body = content.get("body", "")
        if not isinstance(body, str) or len(body) > MAX_TEXT:
            raise Malformed(f"{event_id}: body is not a string")
        if not isinstance(msgtype, str):
            raise Malformed(f"{event_id}: msgtype is not a string")
        attachments: tuple[Attachment, ...] = ()
        if msgtype in FILE_KINDS:
            if "file" in content and "url" not in content:
                return self._incoming(room, sender, event_id, "", relation, edit_of, content,
                                      notice="I cannot open files in encrypted rooms.")
            url = _str(content.get("url"), f"{event_id}: url", limit=1024)
            if not url.startswith("mxc://"):
                raise Malformed(f"{event_id}: url is not an mxc:// URI")
            attachments = (self.attachment(FILE_KINDS[msgtype], content),)
            filename = content.get("filename")
            # a caption is a body that differs from the file's name (Matrix 1.10 media captions)
            body = body if isinstance(filename, str) and filename and filename != body else ""
        elif msgtype == "m.emote":
            body = f"* {body}"
        elif msgtype == "m.location":  # one line for the model, like Telegram's and WhatsApp's locations
            where = _geo(content.get("geo_uri"))
            if where is None:
                raise Malformed(f"{event_id}: m.location without a geo: URI")
            said = " ".join(body.split())[:300]
            body = location_text(*where, said if "geo:" not in said else "")
        elif msgtype != "m.text":
            return None  # m.key.verification.request, a client's own types
        if relation and isinstance(relation.get("m.in_reply_to"), dict):
            body = strip_reply_fallback(body)
        return self._incoming(room, sender, event_id, body, relation, edit_of, content, attachments=attachments)

    def _incoming(self, room: str, sender: str, event_id: str, text: str, relation: dict[str, Any] | None,
                  edit_of: str | None, content: dict[str, Any], *, notice: str | None = None,
                  attachments: tuple[Attachment, ...] = ()) -> Incoming:
        direct = self.is_direct(room)
        return Incoming(platform=self.platform, chat_id=room, text=text, sender_id=sender, update_id=event_id,
                        message_id=edit_of or event_id, chat_kind="private" if direct else "group",
                        mentioned=not direct and self.mentions_bot(content, relation),
                        notice=notice, attachments=attachments, edit_of=edit_of)

    def mentions_bot(self, content: dict[str, Any], relation: dict[str, Any] | None) -> bool:
        """``m.mentions`` names the bot, a pill links to it, its id or name is in the text, or it replies to it."""
        mentions = content.get("m.mentions")
        if isinstance(mentions, dict):
            users = mentions.get("user_ids")
            if isinstance(users, list) and self.user_id in users:
                return True
        formatted = content.get("formatted_body")
        if isinstance(formatted, str) and self._pill.search(formatted):
            return True
        body = content.get("body")
        if isinstance(body, str) and (self.user_id in body or re.search(
                rf"(?<![\w@]){re.escape(self.localpart)}\b", body, re.IGNORECASE)):
            return True
        reply = relation.get("m.in_reply_to") if relation else None
        target = reply.get("event_id") if isinstance(reply, dict) else None
        return isinstance(target, str) and self.sent_by_bot(target)


_GEO = re.compile(r"^geo:(-?\d{1,2}(?:\.\d+)?),(-?\d{1,3}(?:\.\d+)?)(?:[,;].*)?$")


def _geo(uri: Any) -> tuple[float, float] | None:
    """``geo:52.52,13.405;u=35`` (RFC 5870, as ``m.location`` carries it) → ``(52.52, 13.405)``."""
    match = _GEO.match(uri) if isinstance(uri, str) and len(uri) <= 200 else None
    if match is None:
        return None
    latitude, longitude = float(match[1]), float(match[2])
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None
    return latitude, longitude
