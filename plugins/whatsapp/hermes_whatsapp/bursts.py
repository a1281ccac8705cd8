"""Several photos, videos or documents sent at once reach the core as one message.

WhatsApp has no album in its API: a person who picks four photos and
presses send gets four messages delivered, one per photo (in one webhook
POST or several), each with its own id and caption. Handed over one by one,
the core would answer the first photo alone and the other three together in
a second reply. So a person's photos, videos and documents are held here
until none more has come for :data:`QUIET` seconds (at most :data:`LONGEST`
after the first, at once when :data:`MAX_PARTS` are in), then handed over
as one :class:`~hermes_gateway.Incoming`: the first's ids, every file in
order, the captions joined. Text, voice notes and everything else go
through at once — and first hand over the files that person sent before
them, so the order is kept.

Meta is told 200 for each part as it comes (as for any message); while the
gateway stops, what is held is handed over before the core stops taking
messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from hermes_gateway import Incoming

log = logging.getLogger(__name__)

#: Seconds without another file from the person after which their files are handed over.
QUIET = 0.6
#: Seconds after the first file at which they are handed over whatever still comes.
LONGEST = 3.0
#: Files a person may send at once in WhatsApp's apps (more are handed over in several messages).
MAX_PARTS = 30
#: Message kinds held to be sent together (a voice note or a sticker stands alone).
GROUPED_KINDS = frozenset({"image", "video", "document"})
#: Ids of parts handed over that are remembered, so a part Meta delivers again is not a new message (the core
#: dedupes the group by its first part's id only).
REMEMBERED = 1000


@dataclass
class _Held:
    parts: list[Incoming] = field(default_factory=list)
    started: float = 0.0
    timer: asyncio.TimerHandle | None = None


def merged(parts: list[Incoming]) -> Incoming:
    """One message of a person's files, in the order they came: the first's ids, all files, all captions."""
    first = parts[0]
    return replace(first, text="\n\n".join(m.text for m in parts if m.text),
                   attachments=tuple(a for m in parts for a in m.attachments))


class Bursts:
    """Files being received from each person, each burst handed to ``receive`` as one message."""

    def __init__(self, receive: Callable[[Incoming], Any]) -> None:
        self.receive = receive
        self._held: dict[str, _Held] = {}  # chat id -> its files so far
        self._handed: OrderedDict[str, None] = OrderedDict()

    def take(self, incoming: Incoming, kind: str) -> None:
        """Hand ``incoming`` over, or hold it with the person's other files (``kind``: WhatsApp's type)."""
        if incoming.message_id in self._handed:
            return  # a part Meta delivered again after its burst was handed over: answered already
        if kind not in GROUPED_KINDS or not incoming.attachments:
            self._hand_over(incoming.chat_id)  # the files before it go first
            self.receive(incoming)
            return
        loop = asyncio.get_running_loop()
        held = self._held.get(incoming.chat_id)
        if held is None:
            held = self._held[incoming.chat_id] = _Held(started=loop.time())
        if any(m.message_id == incoming.message_id for m in held.parts):
            return  # the same message delivered again while held
        held.parts.append(incoming)
        if held.timer is not None:
            held.timer.cancel()
        if len(held.parts) >= MAX_PARTS:
            self._hand_over(incoming.chat_id)
        else:
            wait = min(QUIET, max(0.0, held.started + LONGEST - loop.time()))
            held.timer = loop.call_later(wait, self._hand_over, incoming.chat_id)

    def hand_over_all(self) -> None:
        """Hand every burst held over now (the gateway stops: the core still takes them)."""
        for chat_id in list(self._held):
            self._hand_over(chat_id)

    def _hand_over(self, chat_id: str) -> None:
        held = self._held.pop(chat_id, None)
        if held is None:
            return
        if held.timer is not None:
            held.timer.cancel()
        for part in held.parts:
            if part.message_id is not None:
                self._handed[part.message_id] = None
        while len(self._handed) > REMEMBERED:
            self._handed.popitem(last=False)
        if len(held.parts) > 1:
            log.debug("whatsapp: %d files from %s handed over as one message", len(held.parts), chat_id)
        self.receive(merged(held.parts))
