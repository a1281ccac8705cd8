"""A group's recent conversation the bot was not addressed by, kept as the room's context (issue 38).

In a group the bot answers only what is addressed to it, yet "@bot what do
you think?" asks about what was said before. With ``groups.context_messages``
on, the inbound runtime keeps each unaddressed message here (its text cut,
the names of its files, never the files, who sent it and when), per chat
and thread, and an addressed turn reads them back (:mod:`..groups.room`).

Kept in the conversation store, beside the conversations, so the context
survives a restart and replicas on one PostgreSQL share it. Bounded at every
write: the newest ``max_messages`` rows of a room whose texts together stay
within ``max_chars``; older rows are deleted in the same transaction.

:class:`RoomContextRecords` is the seam; the memory backend is here,
:mod:`.room_context_sqlite` and :mod:`.room_context_postgres` the others,
and one contract test module runs against all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

#: A room: (platform, chat id, thread id or "" for none): SQL keys need no NULL.
Room = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class RoomMessage:
    """One message of a room's conversation, as kept: no file's content, only its name."""

    sender_id: str            # the platform's id of the sender ("" when the platform gave none): forget_person
    sender: str               # how the sender is shown (a display name, else the id)
    text: str                 # already cut to the room's bound
    files: tuple[str, ...]    # the names of its attachments
    at: float                 # Unix time it arrived
    from_bot: bool = False

    @property
    def size(self) -> int:
        """What the message costs of the room's ``max_chars``."""
        return len(self.sender) + len(self.text) + sum(len(f) for f in self.files)


def room_of(platform: str, chat_id: str, thread_id: str | None) -> Room:
    return (platform, chat_id, thread_id or "")


def within(sizes: Iterable[int], max_messages: int, max_chars: int) -> int:
    """How many messages of these ``sizes`` (newest first) the bounds keep."""
    total = count = 0
    for size in sizes:
        total += size
        if count >= max_messages or total > max_chars:
            break
        count += 1
    return count


def kept(messages: Sequence[RoomMessage], max_messages: int, max_chars: int) -> int:
    """How many of ``messages`` (oldest first) the bounds keep, counted from the newest."""
    return within((m.size for m in reversed(messages)), max_messages, max_chars)


class RoomContextRecords:
    """Keep, read and clear a room's context; every write is one transaction."""

    async def keep_room_message(self, room: Room, message: RoomMessage, max_messages: int, max_chars: int) -> None:
        """Add ``message`` to ``room`` and delete what the bounds no longer keep (the oldest first)."""
        from .base import StoreError

        raise StoreError(f"{getattr(self, 'location', '(store)')}: this store does not keep a room's context")

    async def room_context(self, room: Room, max_messages: int, max_chars: int) -> list[RoomMessage]:
        """The room's kept messages within the bounds, oldest first."""
        return []

    async def forget_room(self, room: Room) -> int:
        """``/forget``: delete the room's context; how many messages were deleted."""
        return 0


class MemoryRoomContextRecords(RoomContextRecords):
    """The rooms in this process's memory (the :class:`~.memory.MemoryStore`'s; kept across ``close()`` like it)."""

    def _rooms(self) -> dict[Room, list[RoomMessage]]:
        rooms: dict[Room, list[RoomMessage]] | None = self.__dict__.get("_room_context")
        if rooms is None:
            rooms = self.__dict__["_room_context"] = {}
        return rooms

    async def keep_room_message(self, room: Room, message: RoomMessage, max_messages: int, max_chars: int) -> None:
        messages = self._rooms().setdefault(room, [])
        messages.append(message)
        del messages[:len(messages) - kept(messages, max_messages, max_chars)]

    async def room_context(self, room: Room, max_messages: int, max_chars: int) -> list[RoomMessage]:
        messages = self._rooms().get(room, [])
        return list(messages[len(messages) - kept(messages, max_messages, max_chars):])

    async def forget_room(self, room: Room) -> int:
        return len(self._rooms().pop(room, []))

    def forget_sender(self, platform: str, sender_id: str) -> int:
        """``forget_person``'s share: what ``sender_id`` said in any room of ``platform``; how many were kept."""
        gone = 0
        for room, messages in self._rooms().items():
            if room[0] == platform:
                kept_ = [m for m in messages if m.sender_id != sender_id]
                gone += len(messages) - len(kept_)
                messages[:] = kept_
        return gone
