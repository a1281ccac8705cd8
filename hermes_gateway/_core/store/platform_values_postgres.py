"""A platform's small values (:mod:`.platform_values`) on PostgreSQL, shared by every replica.

A write takes a transaction-scoped advisory lock on the platform, so two replicas writing at once cannot both
pass the size check on the same total.
"""

from __future__ import annotations

from typing import Any

from .platform_values import PlatformValueRecords

#: Run (idempotently) by the migration, also on a database an older version created.
PLATFORM_VALUES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hermes_platform_values ("
    " platform TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, size INTEGER NOT NULL,"
    " PRIMARY KEY (platform, key))",
)
#: The table whose presence says :data:`PLATFORM_VALUES_SCHEMA` already ran.
PLATFORM_VALUES_MARKER = "hermes_platform_values"
#: The advisory lock's first key (the second is the platform's hash): one writer per platform at a time.
PLATFORM_VALUES_LOCK = 0x68706B76


class PostgresPlatformValueRecords(PlatformValueRecords):
    """Mixed into :class:`~.postgres.PostgresStore`, which provides ``_run``."""

    _run: Any

    async def platform_value(self, platform: str, key: str) -> str | None:
        async def read(conn: Any) -> str | None:
            row = await (await conn.execute("SELECT value FROM hermes_platform_values WHERE platform = %s "
                                            "AND key = %s", (platform, key))).fetchone()
            return None if row is None else str(row[0])
        return await self._run(read)

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        size = len(value.encode())

        async def write(conn: Any) -> bool:
            await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (PLATFORM_VALUES_LOCK, platform))
            row = await (await conn.execute("SELECT COALESCE(SUM(size), 0) FROM hermes_platform_values "
                                            "WHERE platform = %s AND key <> %s", (platform, key))).fetchone()
            if int(row[0]) + size > max_total:
                return False
            await conn.execute("INSERT INTO hermes_platform_values (platform, key, value, size) "
                               "VALUES (%s, %s, %s, %s) ON CONFLICT (platform, key) "
                               "DO UPDATE SET value = EXCLUDED.value, size = EXCLUDED.size",
                               (platform, key, value, size))
            return True
        return await self._run(write, transaction=True)

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        async def write(conn: Any) -> bool:
            cursor = await conn.execute("DELETE FROM hermes_platform_values WHERE platform = %s AND key = %s",
                                        (platform, key))
            return bool(cursor.rowcount == 1)
        return await self._run(write, transaction=True)
