"""Mattermost's ``posted`` and ``post_edited`` events as the core's ``Incoming``.

An event's ``data.post`` is the Post as a **JSON string** (not an object);
``data.channel_type`` says the kind of channel: ``D`` a direct message
(kind ``dm``: always answered), ``G`` a group message (``group``), ``O`` a
public and ``P`` a private channel (``channel``, ``private_channel``):
answered when the bot is @-mentioned (``data.mentions``, a JSON string of
user ids, or ``@botname`` in the text) or in a thread it is part of.

Threads: a post in a thread (``root_id``) is answered in that thread
(``thread_id`` = the root's id). A top-level post in a channel starts a
thread under itself (``thread_replies: true``, the default), so the reply
and the conversation after it stay together; in a DM the bot answers in
the channel. Other users' bots (``props.from_bot``), the bot's own posts
(Mattermost broadcasts them back) and system posts (a ``type``) are never
handed on. Anything malformed raises :class:`Malformed`: the receiver
skips the event in one log line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable

from hermes_gateway import Incoming

from .files import attachments_of

KINDS = {"D": "dm", "G": "group", "O": "channel", "P": "private_channel"}
#: How many channels' kinds and joined threads are remembered (the oldest are forgotten first).
MEMORY = 10_000
#: The longest message read from an event (the server's own limit is 16,383 runes; more is not Mattermost's).
MAX_TEXT = 70_000


class Malformed(ValueError):
    """An event that is not what Mattermost sends: skipped, in one line."""


@dataclass
class Identity:
    """Who the bot is on the server (``GET /users/me``)."""

    user_id: str
    username: str


def post_of(data: Any) -> dict[str, Any]:
    """The Post inside an event's ``data`` (a JSON string there), checked for the fields the plugin reads."""
    if not isinstance(data, dict):
        raise Malformed("data is not an object")
    raw = data.get("post")
    if not isinstance(raw, str) or len(raw) > 4 * MAX_TEXT + 1_000_000:
        raise Malformed("data.post is not a JSON string of a sane size")
    try:
        post = json.loads(raw)
    except ValueError:
        raise Malformed("data.post is not JSON") from None
    return checked(post)


def checked(post: Any) -> dict[str, Any]:
    """``post`` when it has the fields the plugin reads, of the right types; else Malformed."""
    if not isinstance(post, dict):
        raise Malformed("the post is not an object")
    for key in ("id", "channel_id", "user_id"):
        if not isinstance(post.get(key), str) or not post[key] or len(post[key]) > 64:
            raise Malformed(f"post.{key} is missing or not an id")
    for key in ("message", "root_id", "type"):
        if not isinstance(post.get(key, ""), str):
            raise Malformed(f"post.{key} is not a string")
    if len(post.get("message", "")) > MAX_TEXT:
        raise Malformed("post.message is longer than Mattermost allows")
    if not isinstance(post.get("props") or {}, dict):
        raise Malformed("post.props is not an object")
    return post


class Reader:
    """Turns events into ``Incoming`` values for one bot; remembers channel kinds and the threads it joined."""

    def __init__(self, platform: str, *, thread_replies: bool, files: Any,
                 has_conversation: Callable[[str, str | None], Awaitable[bool]]) -> None:
        self.platform = platform
        self.thread_replies = thread_replies
        self.files = files
        self.has_conversation = has_conversation
        self.me: Identity | None = None
        self.kinds: dict[str, str] = {}          # channel id -> D/G/O/P, as events said
        self.joined: dict[tuple[str, str], None] = {}  # (channel, root) threads the bot replied in, oldest first

    def join(self, channel: str, root: str) -> None:
        """The bot is part of this thread: later posts in it are for the bot without a mention."""
        self.joined.pop((channel, root), None)
        self.joined[(channel, root)] = None
        _bound(self.joined)

    def own(self, post: dict[str, Any]) -> bool:
        return self.me is not None and post["user_id"] == self.me.user_id

    async def posted(self, data: Any) -> Incoming | None:
        """A ``posted`` event's data."""
        post = post_of(data)
        kind_letter = data.get("channel_type")
        if not isinstance(kind_letter, str) or kind_letter not in KINDS:
            kind_letter = self.kinds.get(post["channel_id"], "O")
        self.kinds[post["channel_id"]] = kind_letter
        _bound(self.kinds)
        if self.skipped(post):
            return None
        return await self._incoming(post, kind_letter, _mentions(data.get("mentions")))

    async def fetched(self, post: Any, channel_type: str) -> Incoming | None:
        """A post the catch-up fetched (``GET /channels/{id}/posts?since=``): no event data, the kind remembered."""
        post = checked(post)
        if self.skipped(post):
            return None
        return await self._incoming(post, channel_type if channel_type in KINDS else "O", [])

    def skipped(self, post: dict[str, Any]) -> bool:
        """The bot's own post, a system post, another integration's bot post: never answered."""
        return self.own(post) or bool(post.get("type")) or \
            str((post.get("props") or {}).get("from_bot", "")) == "true"

    async def edited(self, data: Any) -> Incoming | None:
        """A person edited a post: the same message under a new update id, ``edit_of`` the post."""
        post = post_of(data)
        if self.skipped(post):
            return None
        kind = self.kinds.get(post["channel_id"], "O")
        incoming = await self._incoming(post, kind, [])
        if incoming is None:
            return None
        edit_at = post.get("edit_at") or post.get("update_at") or 0
        return replace(incoming, update_id=f"{post['id']}:edit:{edit_at}", edit_of=post["id"])

    async def _incoming(self, post: dict[str, Any], kind_letter: str, mentions: list[str]) -> Incoming | None:
        channel, root = post["channel_id"], post.get("root_id") or None
        kind = KINDS[kind_letter]
        text, named = self._without_own_mention(post.get("message", ""))
        attachments = attachments_of(post, self.files)
        if not text and not attachments:
            return None
        mentioned = named or (self.me is not None and self.me.user_id in mentions)
        if root is not None and not mentioned and kind != "dm":
            mentioned = (channel, root) in self.joined or await self.has_conversation(channel, root)
            if mentioned:
                self.join(channel, root)
        thread = root
        if thread is None and self.thread_replies and kind != "dm":
            thread = post["id"]  # the reply starts a thread under the person's post
        return Incoming(platform=self.platform, chat_id=channel, text=text, sender_id=post["user_id"],
                        update_id=post["id"], message_id=post["id"], thread_id=thread, chat_kind=kind,
                        mentioned=mentioned, bot_name=self.me.username if self.me else None,
                        attachments=attachments)

    def _without_own_mention(self, message: str) -> tuple[str, bool]:
        """``@hermes echo: hi`` -> (``echo: hi``, True): the bot's own mention is addressing, not text."""
        if self.me is None:
            return message.strip(), False
        own = re.compile(rf"(?<![\w.\-@])@{re.escape(self.me.username)}(?![\w\-]|\.\w)", re.IGNORECASE)
        named = own.search(message) is not None
        message = re.sub(rf"^\s*(?:{own.pattern}[\s,:]*)+", "", message, flags=re.IGNORECASE)
        return message.strip(), named


def _bound(memory: dict[Any, Any]) -> None:
    while len(memory) > MEMORY:
        del memory[next(iter(memory))]


def _mentions(raw: Any) -> list[str]:
    """``data.mentions``: a JSON string of user ids (absent when nobody is mentioned)."""
    if not isinstance(raw, str) or len(raw) > 100_000:
        return []
    try:
        ids = json.loads(raw)
    except ValueError:
        return []
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
