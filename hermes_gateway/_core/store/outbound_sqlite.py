"""Schedules' last runs and reminders (:mod:`.outbound_records`) in the SQLite file, on the store's own thread.

Tables of their own, created idempotently at every open (:data:`OUTBOUND_SCHEMA`);
the claims are single UPDATE/INSERT statements inside a transaction, so two
processes sharing the file cannot both win one occurrence.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .base import ConversationKey
from .codec import key_parts
from .outbound_records import OutboundRecords, Reminder

OUTBOUND_SCHEMA = """
CREATE TABLE IF NOT EXISTS schedule_runs (           -- the occurrence each schedule last ran (or skipped)
    name     TEXT PRIMARY KEY,
    last_run REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reminders (               -- reminders people asked for
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    platform  TEXT NOT NULL,
    chat_id   TEXT NOT NULL,
    thread_id TEXT NOT NULL DEFAULT '',
    text      TEXT NOT NULL,
    next_at   REAL NOT NULL,
    every     REAL,
    created   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS reminders_due ON reminders (next_at);
CREATE INDEX IF NOT EXISTS reminders_chat ON reminders (platform, chat_id, thread_id);
"""
_COLUMNS = "id, platform, chat_id, thread_id, text, next_at, every, created"


def _reminder(row: tuple) -> Reminder:
    return Reminder(row[0], row[1], row[2], row[3] or None, row[4], row[5], row[6], row[7])


class SQLiteOutboundRecords(OutboundRecords):
    """Mixed into :class:`~.sqlite.SQLiteStore`, which provides ``_run`` (its thread)."""

    _run: Any

    async def schedule_last_run(self, name: str) -> float | None:
        def read(db: sqlite3.Connection) -> float | None:
            row = db.execute("SELECT last_run FROM schedule_runs WHERE name = ?", (name,)).fetchone()
            return None if row is None else row[0]
        return await self._run(read)

    async def claim_schedule_run(self, name: str, at: float) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            with _tx(db):
                cursor = db.execute("INSERT INTO schedule_runs (name, last_run) VALUES (?, ?) ON CONFLICT (name) "
                                    "DO UPDATE SET last_run = excluded.last_run WHERE last_run < excluded.last_run",
                                    (name, at))
                return cursor.rowcount == 1
        return await self._run(write)

    async def add_reminder(self, platform: str, chat_id: str, thread_id: str | None, text: str, next_at: float,
                           every: float | None, now: float, max_per_chat: int) -> Reminder | None:
        def write(db: sqlite3.Connection) -> Reminder | None:
            with _tx(db):
                count = db.execute("SELECT COUNT(*) FROM reminders WHERE platform = ? AND chat_id = ? "
                                   "AND thread_id = ?", (platform, chat_id, thread_id or "")).fetchone()[0]
                if count >= max_per_chat:
                    return None
                cursor = db.execute("INSERT INTO reminders (platform, chat_id, thread_id, text, next_at, every, "
                                    "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                    (platform, chat_id, thread_id or "", text, next_at, every, now))
                rowid = cursor.lastrowid
                assert rowid is not None  # an INSERT sets it
                return Reminder(int(rowid), platform, chat_id, thread_id, text, next_at, every, now)
        return await self._run(write)

    async def reminders(self, key: ConversationKey) -> list[Reminder]:
        def read(db: sqlite3.Connection) -> list[Reminder]:
            rows = db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE platform = ? AND chat_id = ? "
                              "AND thread_id = ? ORDER BY next_at, id", key_parts(key))
            return [_reminder(row) for row in rows]
        return await self._run(read)

    async def due_reminders(self, now: float, limit: int = 100) -> list[Reminder]:
        def read(db: sqlite3.Connection) -> list[Reminder]:
            rows = db.execute(f"SELECT {_COLUMNS} FROM reminders WHERE next_at <= ? ORDER BY next_at, id LIMIT ?",
                              (now, limit))
            return [_reminder(row) for row in rows]
        return await self._run(read)

    async def next_reminder_at(self) -> float | None:
        def read(db: sqlite3.Connection) -> float | None:
            return db.execute("SELECT MIN(next_at) FROM reminders").fetchone()[0]
        return await self._run(read)

    async def advance_reminder(self, reminder_id: int, fired_at: float, next_at: float | None) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            with _tx(db):
                if next_at is None:
                    cursor = db.execute("DELETE FROM reminders WHERE id = ? AND next_at = ?", (reminder_id, fired_at))
                else:
                    cursor = db.execute("UPDATE reminders SET next_at = ? WHERE id = ? AND next_at = ?",
                                        (next_at, reminder_id, fired_at))
                return cursor.rowcount == 1
        return await self._run(write)

    async def cancel_reminder(self, key: ConversationKey, reminder_id: int) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            with _tx(db):
                cursor = db.execute("DELETE FROM reminders WHERE id = ? AND platform = ? AND chat_id = ? "
                                    "AND thread_id = ?", (reminder_id, *key_parts(key)))
                return cursor.rowcount == 1
        return await self._run(write)


def _tx(db: sqlite3.Connection) -> Any:
    from .sqlite import _transaction

    return _transaction(db)
