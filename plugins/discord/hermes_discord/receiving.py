"""Receiving messages: discord.py's ``on_message`` events handed to the core as ``Incoming`` values.

discord.py keeps the gateway websocket (heartbeats, reconnects, resumes);
this module only turns a ``discord.Message`` into the core's ``Incoming``.
The core dedupes (by message id, so events replayed after a resume are
answered once), checks access and mentions, and keeps one reply at a time
per channel. A person's edit (``on_raw_message_edit``) is handed on as an
edit of the message (:func:`edit_to_incoming`; the core's ``on_edit`` decides).

Ids: a server channel is the chat; a thread is ``thread_id`` under its
parent channel (so ``allowed_channels`` listing the parent covers it); a
DM's channel is the chat, kind ``dm`` (always answered).

Files come along as ``attachments`` (:mod:`.inbound_files`), the message's
words as their caption; a message of files and no words is handed on too,
with empty ``text``. Nothing is downloaded before the core asks.

A forwarded message (Discord's forward: no words of its own, the original
in ``message_snapshots``) comes with the original's words quoted under
``[forwarded message]`` and its files; it used to be dropped as empty.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from hermes_gateway import Incoming, forwarded_text

from .download import Downloads
from .inbound_files import attachments_of

NAME = "discord"


def to_incoming(message: Any, me: Any, downloads: Downloads) -> Incoming | None:
    """A ``discord.Message`` as the core's ``Incoming``; None for what must never be answered.

    This bot's own messages and system messages (joins, pins) are dropped
    here, before the core sees them; other bots' are handed over with
    ``from_bot`` (the core's ``groups.bots`` decides), and so is a message
    with neither words nor files (a sticker alone): there is nothing to
    answer. ``downloads`` fetches the files, if the core keeps the message.
    """
    import discord

    author = message.author
    if author is None or (me is not None and author.id == me.id):
        return None
    if message.type not in (discord.MessageType.default, discord.MessageType.reply):
        return None
    channel = message.channel
    mentioned = _mentions(message, me)
    text = _without_own_mention(message.content or "", me)
    attachments = attachments_of(message, downloads)
    snapshots = list(getattr(message, "message_snapshots", None) or ())[:MAX_FORWARDED]
    forwarded = "\n\n".join(forwarded_text(s.content.strip()) for s in snapshots if (s.content or "").strip())
    if forwarded:
        text = f"{text}\n\n{forwarded}" if text else forwarded
    for snapshot in snapshots:
        attachments += attachments_of(snapshot, downloads)
    if not text and not attachments:
        return None
    if message.guild is None and getattr(message, "guild_id", None) is None and _is_dm(channel):
        chat_id, thread_id, kind = str(channel.id), None, "dm"
    elif isinstance(channel, discord.Thread):
        chat_id, thread_id, kind = str(channel.parent_id), str(channel.id), "thread"
    else:
        chat_id, thread_id, kind = str(channel.id), None, "guild"
    return Incoming(
        platform=NAME, chat_id=chat_id, text=text, sender_id=str(author.id), update_id=str(message.id),
        message_id=str(message.id), thread_id=thread_id, chat_kind=kind, mentioned=mentioned,
        bot_name=getattr(me, "name", None), attachments=attachments, from_bot=bool(getattr(author, "bot", False)),
        sender_name=getattr(author, "global_name", None) or getattr(author, "name", None),
    )


def edit_to_incoming(payload: Any, me: Any, downloads: Downloads) -> Incoming | None:
    """MESSAGE_UPDATE (``on_raw_message_edit``) as an edit of the person's message, or None.

    Discord sends it for unfurls and pins too; the core ignores an edit whose text did not change. The update
    id carries the edit's timestamp, so each edit is new to the dedupe while a redelivery of it is not.
    """
    message = getattr(payload, "message", None)
    data = getattr(payload, "data", None) or {}
    if message is None or not data.get("edited_timestamp"):
        return None
    incoming = to_incoming(message, me, downloads)
    if incoming is None:
        return None
    return replace(incoming, update_id=f"{incoming.message_id}:edit:{data['edited_timestamp']}",
                   edit_of=incoming.message_id)


#: Forwarded messages read from one message (Discord sends one).
MAX_FORWARDED = 5


def target_channel(chat_id: str, thread_id: str | None) -> int:
    """Where a reply goes: the thread when there is one (a thread is a channel of its own)."""
    return int(thread_id) if thread_id not in (None, "") else int(chat_id)


def _is_dm(channel: Any) -> bool:
    import discord

    return isinstance(channel, (discord.DMChannel, discord.GroupChannel)) or \
        getattr(channel, "type", None) == discord.ChannelType.private


def _mentions(message: Any, me: Any) -> bool:
    """@-mentioned (a user mention, not @everyone), or a reply to one of the bot's messages."""
    if me is None:
        return False
    if any(user.id == me.id for user in message.mentions):
        return True
    reference = message.reference
    resolved = getattr(reference, "resolved", None) if reference is not None else None
    author = getattr(resolved, "author", None)
    return author is not None and author.id == me.id


def _without_own_mention(content: str, me: Any) -> str:
    """``<@id> echo: hi`` -> ``echo: hi``: the bot's own mention is addressing, not text.

    A mention of the bot later in the text becomes ``@name``, so the model reads a name, not an id.
    """
    if me is None:
        return content.strip()
    own = re.compile(rf"<@!?{me.id}>")
    content = re.sub(rf"^\s*(?:<@!?{me.id}>\s*)+", "", content)
    return own.sub(f"@{me.name}", content).strip()
