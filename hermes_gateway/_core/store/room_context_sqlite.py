"""A group's room context (:mod:`.room_context`) in the SQLite file, on the store's own thread."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from .room_context import Room, RoomContextRecords, RoomMessage, kept, within

ROOM_CONTEXT_SCHEMA = """
CREATE TABLE IF NOT EXISTS room_context (            -- a group's recent messages not addressed to the bot
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    platform  TEXT NOT NULL,
    chat_id   TEXT NOT NULL,
    thread_id TEXT NOT NULL,                         -- '' when none
    sender_id TEXT NOT NULL,
    sender    TEXT NOT NULL,
    text      TEXT NOT NULL,
    files     TEXT NOT NULL,                         -- JSON list of file names (never a file's content)
    at        REAL NOT NULL,
    from_bot  INTEGER NOT NULL,
    size      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS room_context_room ON room_context (platform, chat_id, thread_id, id);
"""

_COLUMNS = "sender_id, sender, text, files, at, from_bot"


def row_message(row: Any) -> RoomMessage:
    """A stored row (:data:`_COLUMNS`, SQLite's or PostgreSQL's) as a :class:`RoomMessage`."""
    sender_id, sender, text, files, at, from_bot = row
    return RoomMessage(str(sender_id), str(sender), str(text), tuple(json.loads(files)), float(at), bool(from_bot))


class SQLiteRoomContextRecords(RoomContextRecords):
    """Mixed into :class:`~.sqlite.SQLiteStore`, which provides ``_run`` (its thread)."""

    _run: Any

    async def keep_room_message(self, room: Room, message: RoomMessage, max_messages: int, max_chars: int) -> None:
        def write(db: sqlite3.Connection) -> None:
            from .sqlite import _transaction

            with _transaction(db):
                db.execute(f"INSERT INTO room_context (platform, chat_id, thread_id, {_COLUMNS}, size) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (*room, message.sender_id, message.sender, message.text, json.dumps(message.files),
                            message.at, int(message.from_bot), message.size))
                rows = db.execute("SELECT id, size FROM room_context WHERE platform = ? AND chat_id = ? AND "
                                  "thread_id = ? ORDER BY id DESC LIMIT ?", (*room, max_messages + 1)).fetchall()
                keep = within((size for _, size in rows), max_messages, max_chars)
                if keep < len(rows):  # the oldest kept row's id: everything older goes (none kept: all of it)
                    oldest = rows[keep - 1][0] if keep else rows[0][0] + 1
                    db.execute("DELETE FROM room_context WHERE platform = ? AND chat_id = ? AND thread_id = ? "
                               "AND id < ?", (*room, oldest))
        await self._run(write)

    async def room_context(self, room: Room, max_messages: int, max_chars: int) -> list[RoomMessage]:
        def read(db: sqlite3.Connection) -> list[RoomMessage]:
            rows = db.execute(f"SELECT {_COLUMNS} FROM room_context WHERE platform = ? AND chat_id = ? AND "
                              "thread_id = ? ORDER BY id DESC LIMIT ?", (*room, max_messages)).fetchall()
            messages = [row_message(r) for r in reversed(rows)]
            return messages[len(messages) - kept(messages, max_messages, max_chars):]
        return await self._run(read)

    async def forget_room(self, room: Room) -> int:
        def write(db: sqlite3.Connection) -> int:
            from .sqlite import _transaction

            with _transaction(db):
                cursor = db.execute("DELETE FROM room_context WHERE platform = ? AND chat_id = ? AND thread_id = ?",
                                    room)
                return int(cursor.rowcount)
        return await self._run(write)

