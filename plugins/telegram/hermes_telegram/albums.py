"""An album (several photos or files sent at once) reaches the core as one message.

Telegram delivers each item of an album as its own message, in its own
update, all with the same ``media_group_id``; the caption is on one of them
(usually the first). Handed over one by one, the core would answer the
first photo alone and the rest in a second turn: two replies to one thing
the person sent. So the parts of an album are held here until none has come
for :data:`QUIET` seconds (or the album is full, or :data:`LONGEST` passed
since its first part), then handed over as one :class:`~hermes_gateway.Incoming`:
the first part's ids, every part's files in order, the captions joined.

Nothing is lost on the way: while an album is held the poller does not
confirm its updates to Telegram (:meth:`Albums.first_held`), so a gateway
that stops or dies meanwhile gets the whole album again from Telegram at
its next start.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from hermes_gateway import Incoming

log = logging.getLogger(__name__)

#: Seconds without a new part after which an album is complete (the parts of one album come within ms of each
#: other; a slow upload can space them out).
QUIET = 0.6
#: Seconds after its first part at which an album is handed over whatever still comes.
LONGEST = 3.0
#: Items in an album at most (Telegram's limit): a full album is handed over at once.
MAX_PARTS = 10
#: Update ids of parts already handed over that are remembered, so a redelivered part is not a new album (the
#: core dedupes the album by its first part's update id only).
REMEMBERED = 1000


@dataclass
class _Held:
    """The parts of one album received so far, and the timer that hands them over."""

    parts: list[tuple[int, Incoming]] = field(default_factory=list)  # (update id, message)
    started: float = 0.0
    timer: asyncio.TimerHandle | None = None


def album_of(update: Any) -> str | None:
    """The update's album (``media_group_id``), for a new message only (an edit is answered on its own)."""
    message = getattr(update, "message", None)
    return getattr(message, "media_group_id", None) if message is not None else None


def merged(parts: list[Incoming]) -> Incoming:
    """One message of an album's parts (in the order they were sent): the first's ids, all files, all captions."""
    ordered = sorted(parts, key=lambda m: int(m.message_id or 0))
    first = ordered[0]
    return replace(first, text="\n\n".join(m.text for m in ordered if m.text),
                   attachments=tuple(a for m in ordered for a in m.attachments),
                   mentioned=any(m.mentioned for m in ordered))


class Albums:
    """Albums being received, each handed to ``receive`` as one message when complete."""

    def __init__(self, receive: Callable[[Incoming], Any]) -> None:
        self.receive = receive
        self._held: dict[tuple[str, str], _Held] = {}
        self._handed: OrderedDict[int, None] = OrderedDict()  # update ids of parts handed over, oldest first

    def hold(self, update: Any, incoming: Incoming) -> bool:
        """Keep ``incoming`` if it is part of an album (True); False: hand it over as it is."""
        group = album_of(update)
        if group is None or incoming.edit_of is not None:
            return False
        if update.update_id in self._handed:
            return True  # a part delivered again after its album was handed over: answered already
        loop = asyncio.get_running_loop()
        key = (incoming.chat_id, str(group))
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held(started=loop.time())
        if any(update_id == update.update_id for update_id, _ in held.parts):
            return True  # the same update again (a webhook's redelivery): held once
        held.parts.append((update.update_id, incoming))
        if held.timer is not None:
            held.timer.cancel()
        if len(held.parts) >= MAX_PARTS:
            self._hand_over(key)
        else:
            wait = min(QUIET, max(0.0, held.started + LONGEST - loop.time()))
            held.timer = loop.call_later(wait, self._hand_over, key)
        return True

    def first_held(self) -> int | None:
        """The lowest update id still held (the poller confirms nothing from there on), or None."""
        ids = [update_id for held in self._held.values() for update_id, _ in held.parts]
        return min(ids) if ids else None

    def hand_over_all(self) -> None:
        """Hand every album held over now, complete or not (a webhook's at stop: Telegram will not resend it)."""
        for key in list(self._held):
            self._hand_over(key)

    def drop_all(self) -> int:
        """Forget every album held (polling at stop: Telegram, never told they arrived, sends them again).
        Returns how many parts were dropped."""
        dropped = 0
        for held in self._held.values():
            if held.timer is not None:
                held.timer.cancel()
            dropped += len(held.parts)
        self._held.clear()
        return dropped

    def _hand_over(self, key: tuple[str, str]) -> None:
        held = self._held.pop(key, None)
        if held is None:
            return
        if held.timer is not None:
            held.timer.cancel()
        for update_id, _ in held.parts:
            self._handed[update_id] = None
        while len(self._handed) > REMEMBERED:
            self._handed.popitem(last=False)
        message = merged([incoming for _, incoming in held.parts])
        log.debug("telegram: an album of %d in chat %s handed over as one message", len(held.parts), key[0])
        self.receive(message)
