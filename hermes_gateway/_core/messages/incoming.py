"""``Incoming``: one message a person sent, as every platform hands it to the core.

A platform plugin's whole inbound job is to turn its wire format into this
value and call ``gateway.receive(incoming)``. Everything after that
(dedupe, access, mention gating, one reply at a time, commands, typing,
shutdown) is the core's, and the same on every platform.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .attachments import Attachment

#: A UTF-16 surrogate on its own: a platform's JSON can carry one (``"\\ud800"``), no upstream can be sent it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: Chat kinds with one person in them: always answered, never mention-gated.
DIRECT_KINDS = frozenset({"private", "dm", "im", "direct"})


@dataclass(frozen=True, slots=True)
class Incoming:
    """One inbound message.

    ``update_id`` is the platform's own id for this delivery (Telegram's
    ``update_id``, Discord's message id, Slack's ``event_id``, WhatsApp's
    ``wamid``): a redelivery carries the same one, so the core answers it
    once. ``mentioned`` is true when the bot was @-mentioned or the message
    replies to one of the bot's. ``bot_name`` lets the core tell
    ``/help@this_bot`` from ``/help@other_bot`` in a group.

    ``notice`` is a fixed answer for a message the model cannot read (a photo,
    a voice note, a sticker): with no ``text``, the core answers it with that
    notice instead of a model turn, in its place in the chat's queue, deduped
    and access-checked like any message, so the person is never met with silence.

    ``attachments``: the files the person sent with the message (``text`` is
    then their caption, possibly empty); see :class:`Attachment`. A message
    with attachments is answered by the model even without text (the
    ``notice`` is then not used); the files are fetched only when its turn
    runs, so a message the core drops costs no download.

    ``edit_of``: this is the person's edit of a message they sent earlier,
    the platform's id of that message (``message_id`` of the original; on
    most platforms the same as this one's ``message_id``); ``text`` is the
    new text. ``update_id`` must still differ from the original's (Discord:
    the message id plus the edit's timestamp). What the core does with it:
    ``conversation.on_edit`` (:mod:`hermes_gateway._core.inbound.edits`).

    ``from_bot``: the sender is a bot (Telegram's ``from.is_bot``, Discord's
    ``author.bot``, Slack's ``bot_id``); set it and hand the message over
    like any other, never drop it in the plugin: the core applies
    ``groups.bots`` and the loop guard. The bot's own messages are the one
    thing a plugin drops itself. ``sender_name``: how the sender is shown
    to people (a display name), used when the message becomes a group's
    context; None shows the ``sender_id``.
    """

    platform: str
    chat_id: str
    text: str
    sender_id: str | None = None
    update_id: str | None = None
    message_id: str | None = None
    thread_id: str | None = None
    chat_kind: str = "private"
    mentioned: bool = False
    bot_name: str | None = None
    notice: str | None = None
    attachments: tuple[Attachment, ...] = ()
    edit_of: str | None = None
    from_bot: bool = False
    sender_name: str | None = None

    def __post_init__(self) -> None:
        # the text goes to the model as UTF-8: a lone surrogate would fail every upstream call, and the person
        # would be told "could not get an answer" for one odd character; it becomes U+FFFD instead
        if not self.text.isascii() and _LONE_SURROGATE.search(self.text):
            object.__setattr__(self, "text", _LONE_SURROGATE.sub("\ufffd", self.text))

    @property
    def is_direct(self) -> bool:
        """A one-to-one chat with the bot (answered without a mention)."""
        return self.chat_kind in DIRECT_KINDS
