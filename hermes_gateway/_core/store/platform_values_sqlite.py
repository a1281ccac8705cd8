"""A platform's small values (:mod:`.platform_values`) in the SQLite file, on the store's own thread."""

from __future__ import annotations

import sqlite3
from typing import Any

from .platform_values import PlatformValueRecords

PLATFORM_VALUES_SCHEMA = """
CREATE TABLE IF NOT EXISTS platform_values (         -- a platform's own small JSON values (a sync position)
    platform TEXT NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    size     INTEGER NOT NULL,
    PRIMARY KEY (platform, key)
) WITHOUT ROWID;
"""


class SQLitePlatformValueRecords(PlatformValueRecords):
    """Mixed into :class:`~.sqlite.SQLiteStore`, which provides ``_run`` (its thread)."""

    _run: Any

    async def platform_value(self, platform: str, key: str) -> str | None:
        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT value FROM platform_values WHERE platform = ? AND key = ?",
                             (platform, key)).fetchone()
            return None if row is None else str(row[0])
        return await self._run(read)

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        size = len(value.encode())

        def write(db: sqlite3.Connection) -> bool:
            from .sqlite import _transaction

            with _transaction(db):  # BEGIN IMMEDIATE: the sum and the write see no other writer between them
                others = db.execute("SELECT COALESCE(SUM(size), 0) FROM platform_values WHERE platform = ? "
                                    "AND key != ?", (platform, key)).fetchone()[0]
                if others + size > max_total:
                    return False
                db.execute("INSERT INTO platform_values (platform, key, value, size) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT (platform, key) DO UPDATE SET value = excluded.value, size = excluded.size",
                           (platform, key, value, size))
                return True
        return await self._run(write)

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            from .sqlite import _transaction

            with _transaction(db):
                cursor = db.execute("DELETE FROM platform_values WHERE platform = ? AND key = ?", (platform, key))
                return cursor.rowcount == 1
        return await self._run(write)
