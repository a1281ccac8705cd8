"""Schedules' last runs and reminders (:mod:`.outbound_records`) on PostgreSQL, shared by every replica.

The claims are single statements (``INSERT ... ON CONFLICT DO UPDATE ...
WHERE``, ``UPDATE/DELETE ... WHERE next_at = %s``): PostgreSQL's row locks
decide which replica takes an occurrence; the other sees no row changed.
"""

from __future__ import annotations

from typing import Any

from .base import ConversationKey
from .codec import key_parts
from .outbound_records import OutboundRecords, Reminder

#: Run (idempotently) by the migration, also on a database an older version created.
OUTBOUND_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hermes_schedule_runs ("
    " name TEXT PRIMARY KEY, last_run DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hermes_reminders ("
    " id BIGSERIAL PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL, thread_id TEXT NOT NULL DEFAULT '',"
    " text TEXT NOT NULL, next_at DOUBLE PRECISION NOT NULL, every DOUBLE PRECISION,"
    " created DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hermes_reminders_due ON hermes_reminders (next_at)",
    "CREATE INDEX IF NOT EXISTS hermes_reminders_chat ON hermes_reminders (platform, chat_id, thread_id)",
)
#: The table whose presence says :data:`OUTBOUND_SCHEMA` already ran.
OUTBOUND_MARKER = "hermes_reminders"
_COLUMNS = "id, platform, chat_id, thread_id, text, next_at, every, created"
#: Serialises adding reminders to one chat across replicas (the limit is a per-chat count).
REMINDERS_LOCK = 0x6865726D


def _reminder(row: tuple) -> Reminder:
    return Reminder(int(row[0]), row[1], row[2], row[3] or None, row[4], row[5], row[6], row[7])


class PostgresOutboundRecords(OutboundRecords):
    """Mixed into :class:`~.postgres.PostgresStore`, which provides ``_run``."""

    _run: Any

    async def schedule_last_run(self, name: str) -> float | None:
        async def read(conn: Any) -> float | None:
            row = await (await conn.execute("SELECT last_run FROM hermes_schedule_runs WHERE name = %s",
                                            (name,))).fetchone()
            return None if row is None else row[0]
        return await self._run(read)

    async def claim_schedule_run(self, name: str, at: float) -> bool:
        async def write(conn: Any) -> bool:
            cursor = await conn.execute(
                "INSERT INTO hermes_schedule_runs (name, last_run) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE"
                " SET last_run = EXCLUDED.last_run WHERE hermes_schedule_runs.last_run < EXCLUDED.last_run",
                (name, at))
            return cursor.rowcount == 1
        return await self._run(write, transaction=True)

    async def add_reminder(self, platform: str, chat_id: str, thread_id: str | None, text: str, next_at: float,
                           every: float | None, now: float, max_per_chat: int) -> Reminder | None:
        async def write(conn: Any) -> Reminder | None:
            parts = (platform, chat_id, thread_id or "")
            await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (REMINDERS_LOCK, "|".join(parts)))
            count = (await (await conn.execute("SELECT COUNT(*) FROM hermes_reminders WHERE platform = %s"
                                               " AND chat_id = %s AND thread_id = %s", parts)).fetchone())[0]
            if count >= max_per_chat:
                return None
            row = await (await conn.execute(
                "INSERT INTO hermes_reminders (platform, chat_id, thread_id, text, next_at, every, created)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id", (*parts, text, next_at, every, now))).fetchone()
            return Reminder(int(row[0]), platform, chat_id, thread_id, text, next_at, every, now)
        return await self._run(write, transaction=True)

    async def reminders(self, key: ConversationKey) -> list[Reminder]:
        async def read(conn: Any) -> list[Reminder]:
            cursor = await conn.execute(f"SELECT {_COLUMNS} FROM hermes_reminders WHERE platform = %s"
                                        " AND chat_id = %s AND thread_id = %s ORDER BY next_at, id", key_parts(key))
            return [_reminder(row) for row in await cursor.fetchall()]
        return await self._run(read)

    async def due_reminders(self, now: float, limit: int = 100) -> list[Reminder]:
        async def read(conn: Any) -> list[Reminder]:
            cursor = await conn.execute(f"SELECT {_COLUMNS} FROM hermes_reminders WHERE next_at <= %s"
                                        " ORDER BY next_at, id LIMIT %s", (now, limit))
            return [_reminder(row) for row in await cursor.fetchall()]
        return await self._run(read)

    async def next_reminder_at(self) -> float | None:
        async def read(conn: Any) -> float | None:
            return (await (await conn.execute("SELECT MIN(next_at) FROM hermes_reminders")).fetchone())[0]
        return await self._run(read)

    async def advance_reminder(self, reminder_id: int, fired_at: float, next_at: float | None) -> bool:
        async def write(conn: Any) -> bool:
            if next_at is None:
                cursor = await conn.execute("DELETE FROM hermes_reminders WHERE id = %s AND next_at = %s",
                                            (reminder_id, fired_at))
            else:
                cursor = await conn.execute("UPDATE hermes_reminders SET next_at = %s WHERE id = %s AND next_at = %s",
                                            (next_at, reminder_id, fired_at))
            return cursor.rowcount == 1
        return await self._run(write, transaction=True)

    async def cancel_reminder(self, key: ConversationKey, reminder_id: int) -> bool:
        async def write(conn: Any) -> bool:
            cursor = await conn.execute("DELETE FROM hermes_reminders WHERE id = %s AND platform = %s"
                                        " AND chat_id = %s AND thread_id = %s", (reminder_id, *key_parts(key)))
            return cursor.rowcount == 1
        return await self._run(write, transaction=True)
