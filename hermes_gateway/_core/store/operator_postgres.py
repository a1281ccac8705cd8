"""The operator's records (:mod:`.operator_records`) on PostgreSQL, shared by every replica.

Each check reads the database, so an approval or a ``/model`` choice made on
one replica holds on the others at once. Every write is one transaction;
pairing codes are redeemed with ``DELETE ... RETURNING``, so two replicas
redeeming the same code approve once.
"""

from __future__ import annotations

from typing import Any

from .base import ConversationKey
from .codec import key_parts
from .operator_records import Approval, OperatorRecords, Pairing, UsageRecord

#: Run (idempotently) by the migration, also on a database an older version created.
OPERATOR_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hermes_chat_settings ("
    " platform TEXT NOT NULL, chat_id TEXT NOT NULL, thread_id TEXT NOT NULL DEFAULT '',"
    " name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (platform, chat_id, thread_id, name))",
    "CREATE TABLE IF NOT EXISTS hermes_approved_users ("
    " platform TEXT NOT NULL, user_id TEXT NOT NULL, approved_at DOUBLE PRECISION NOT NULL,"
    " approved_by TEXT NOT NULL, PRIMARY KEY (platform, user_id))",
    "CREATE TABLE IF NOT EXISTS hermes_pairing_codes ("
    " code TEXT PRIMARY KEY, platform TEXT NOT NULL, user_id TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL, UNIQUE (platform, user_id))",
    "CREATE TABLE IF NOT EXISTS hermes_usage ("
    " seq BIGSERIAL PRIMARY KEY, at DOUBLE PRECISION NOT NULL, platform TEXT NOT NULL, chat_id TEXT NOT NULL,"
    " thread_id TEXT NOT NULL DEFAULT '', user_id TEXT NOT NULL, model TEXT NOT NULL,"
    " input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL, estimated BOOLEAN NOT NULL DEFAULT FALSE)",
    "CREATE INDEX IF NOT EXISTS hermes_usage_at ON hermes_usage (at)",
)
#: The table whose presence says :data:`OPERATOR_SCHEMA` already ran.
OPERATOR_MARKER = "hermes_usage"

_PAIRING = "SELECT code, platform, user_id, chat_id, created, expires FROM hermes_pairing_codes "
_APPROVE = ("INSERT INTO hermes_approved_users (platform, user_id, approved_at, approved_by)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (platform, user_id) DO NOTHING")


class PostgresOperatorRecords(OperatorRecords):
    """Mixed into :class:`~.postgres.PostgresStore`, which provides ``_run``."""

    _run: Any

    async def chat_settings(self, key: ConversationKey) -> dict[str, str]:
        async def read(conn: Any) -> dict[str, str]:
            cursor = await conn.execute("SELECT name, value FROM hermes_chat_settings WHERE platform = %s"
                                        " AND chat_id = %s AND thread_id = %s", key_parts(key))
            return {name: value for name, value in await cursor.fetchall()}
        return await self._run(read)

    async def set_chat_setting(self, key: ConversationKey, name: str, value: str | None) -> None:
        async def write(conn: Any) -> None:
            if value is None:
                await conn.execute("DELETE FROM hermes_chat_settings WHERE platform = %s AND chat_id = %s"
                                   " AND thread_id = %s AND name = %s", (*key_parts(key), name))
            else:
                await conn.execute("INSERT INTO hermes_chat_settings (platform, chat_id, thread_id, name, value)"
                                   " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (platform, chat_id, thread_id, name)"
                                   " DO UPDATE SET value = EXCLUDED.value", (*key_parts(key), name, str(value)))
        await self._run(write, transaction=True)

    async def is_approved(self, platform: str, user_id: str) -> bool:
        async def read(conn: Any) -> bool:
            cursor = await conn.execute("SELECT 1 FROM hermes_approved_users WHERE platform = %s AND user_id = %s",
                                        (platform, user_id))
            return await cursor.fetchone() is not None
        return await self._run(read)

    async def approvals(self) -> list[Approval]:
        async def read(conn: Any) -> list[Approval]:
            cursor = await conn.execute("SELECT platform, user_id, approved_at, approved_by FROM"
                                        " hermes_approved_users ORDER BY approved_at")
            return [Approval(*row) for row in await cursor.fetchall()]
        return await self._run(read)

    async def approve_user(self, platform: str, user_id: str, by: str, now: float) -> None:
        async def write(conn: Any) -> None:
            await conn.execute(_APPROVE, (platform, user_id, now, by))
        await self._run(write, transaction=True)

    async def revoke_user(self, platform: str, user_id: str) -> bool:
        async def write(conn: Any) -> bool:
            a = await conn.execute("DELETE FROM hermes_approved_users WHERE platform = %s AND user_id = %s",
                                   (platform, user_id))
            b = await conn.execute("DELETE FROM hermes_pairing_codes WHERE platform = %s AND user_id = %s",
                                   (platform, user_id))
            return a.rowcount + b.rowcount > 0
        return await self._run(write, transaction=True)

    async def pairing_for(self, platform: str, user_id: str, now: float) -> Pairing | None:
        async def read(conn: Any) -> Pairing | None:
            row = await (await conn.execute(_PAIRING + "WHERE platform = %s AND user_id = %s AND expires > %s",
                                            (platform, user_id, now))).fetchone()
            return None if row is None else Pairing(*row)
        return await self._run(read)

    async def add_pairing(self, pairing: Pairing) -> Pairing:
        async def write(conn: Any) -> Pairing:
            await conn.execute("DELETE FROM hermes_pairing_codes WHERE platform = %s AND user_id = %s"
                               " AND expires <= %s", (pairing.platform, pairing.user_id, pairing.created))
            await conn.execute("INSERT INTO hermes_pairing_codes (code, platform, user_id, chat_id, created, expires)"
                               " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (platform, user_id) DO NOTHING",
                               (pairing.code, pairing.platform, pairing.user_id, pairing.chat_id, pairing.created,
                                pairing.expires))
            row = await (await conn.execute(_PAIRING + "WHERE platform = %s AND user_id = %s",
                                            (pairing.platform, pairing.user_id))).fetchone()
            return Pairing(*row)
        return await self._run(write, transaction=True)

    async def pairings(self, now: float) -> list[Pairing]:
        async def read(conn: Any) -> list[Pairing]:
            cursor = await conn.execute(_PAIRING + "WHERE expires > %s ORDER BY created", (now,))
            return [Pairing(*row) for row in await cursor.fetchall()]
        return await self._run(read)

    async def redeem_pairing(self, code: str, by: str, now: float) -> Pairing | None:
        async def write(conn: Any) -> Pairing | None:
            row = await (await conn.execute(
                "DELETE FROM hermes_pairing_codes WHERE code = %s AND expires > %s"
                " RETURNING code, platform, user_id, chat_id, created, expires", (code, now))).fetchone()
            if row is None:
                return None
            pairing = Pairing(*row)
            await conn.execute(_APPROVE, (pairing.platform, pairing.user_id, now, by))
            return pairing
        return await self._run(write, transaction=True)

    async def record_usage(self, record: UsageRecord) -> None:
        async def write(conn: Any) -> None:
            await conn.execute("INSERT INTO hermes_usage (at, platform, chat_id, thread_id, user_id, model,"
                               " input_tokens, output_tokens, estimated) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                               (record.at, record.platform, record.chat_id, record.thread_id or "", record.user_id,
                                record.model, record.input_tokens, record.output_tokens, record.estimated))
        await self._run(write, transaction=True)

    async def usage(self, since: float = 0.0) -> list[UsageRecord]:
        async def read(conn: Any) -> list[UsageRecord]:
            cursor = await conn.execute("SELECT at, platform, chat_id, thread_id, user_id, model, input_tokens,"
                                        " output_tokens, estimated FROM hermes_usage WHERE at >= %s ORDER BY seq",
                                        (since,))
            return [UsageRecord(at, p, c, t or None, u, m, int(i), int(o), bool(e))
                    for at, p, c, t, u, m, i, o, e in await cursor.fetchall()]
        return await self._run(read)
