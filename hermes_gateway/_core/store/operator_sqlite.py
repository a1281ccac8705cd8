"""The operator's records (:mod:`.operator_records`) in the SQLite file, on the store's own thread.

Tables of their own, created idempotently at every open beside the
conversations (:data:`OPERATOR_SCHEMA`); every write is one transaction.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .base import ConversationKey
from .codec import key_parts
from .operator_records import Approval, OperatorRecords, Pairing, UsageRecord

OPERATOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_settings (           -- a chat's own /model and /persona choices
    platform  TEXT NOT NULL,
    chat_id   TEXT NOT NULL,
    thread_id TEXT NOT NULL DEFAULT '',
    name      TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (platform, chat_id, thread_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS approved_users (          -- users let in by a pairing
    platform    TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    approved_at REAL NOT NULL,
    approved_by TEXT NOT NULL,
    PRIMARY KEY (platform, user_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pairing_codes (           -- one pending code per user
    code     TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    user_id  TEXT NOT NULL,
    chat_id  TEXT NOT NULL,
    created  REAL NOT NULL,
    expires  REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS pairing_codes_user ON pairing_codes (platform, user_id);
CREATE TABLE IF NOT EXISTS usage (                   -- every turn's token usage
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    at            REAL NOT NULL,
    platform      TEXT NOT NULL,
    chat_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL DEFAULT '',
    user_id       TEXT NOT NULL,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    estimated     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS usage_at ON usage (at);
"""


class SQLiteOperatorRecords(OperatorRecords):
    """Mixed into :class:`~.sqlite.SQLiteStore`, which provides ``_run`` (its thread) and ``_transaction``."""

    _run: Any
    _write: Any

    async def chat_settings(self, key: ConversationKey) -> dict[str, str]:
        def read(db: sqlite3.Connection, parts: tuple[str, str, str]) -> dict[str, str]:
            rows = db.execute("SELECT name, value FROM chat_settings WHERE platform = ? AND chat_id = ? "
                              "AND thread_id = ?", parts)
            return {name: value for name, value in rows}
        return await self._run(read, key_parts(key))

    async def set_chat_setting(self, key: ConversationKey, name: str, value: str | None) -> None:
        def write(db: sqlite3.Connection, parts: tuple[str, str, str]) -> None:
            with _tx(db):
                if value is None:
                    db.execute("DELETE FROM chat_settings WHERE platform = ? AND chat_id = ? AND thread_id = ? "
                               "AND name = ?", (*parts, name))
                else:
                    db.execute("INSERT OR REPLACE INTO chat_settings (platform, chat_id, thread_id, name, value) "
                               "VALUES (?, ?, ?, ?, ?)", (*parts, name, str(value)))
        await self._run(write, key_parts(key))

    async def is_approved(self, platform: str, user_id: str) -> bool:
        return await self._run(lambda db: db.execute(
            "SELECT 1 FROM approved_users WHERE platform = ? AND user_id = ?", (platform, user_id)).fetchone()
            is not None)

    async def approvals(self) -> list[Approval]:
        return await self._run(lambda db: [Approval(*row) for row in db.execute(
            "SELECT platform, user_id, approved_at, approved_by FROM approved_users ORDER BY approved_at")])

    async def approve_user(self, platform: str, user_id: str, by: str, now: float) -> None:
        def write(db: sqlite3.Connection) -> None:
            with _tx(db):
                _approve(db, platform, user_id, by, now)
        await self._run(write)

    async def revoke_user(self, platform: str, user_id: str) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            with _tx(db):
                a = db.execute("DELETE FROM approved_users WHERE platform = ? AND user_id = ?",
                               (platform, user_id)).rowcount
                b = db.execute("DELETE FROM pairing_codes WHERE platform = ? AND user_id = ?",
                               (platform, user_id)).rowcount
                return a + b > 0
        return await self._run(write)

    _PAIRING = "SELECT code, platform, user_id, chat_id, created, expires FROM pairing_codes "

    async def pairing_for(self, platform: str, user_id: str, now: float) -> Pairing | None:
        def read(db: sqlite3.Connection) -> Pairing | None:
            row = db.execute(self._PAIRING + "WHERE platform = ? AND user_id = ? AND expires > ?",
                             (platform, user_id, now)).fetchone()
            return None if row is None else Pairing(*row)
        return await self._run(read)

    async def add_pairing(self, pairing: Pairing) -> Pairing:
        def write(db: sqlite3.Connection) -> Pairing:
            with _tx(db):
                row = db.execute(self._PAIRING + "WHERE platform = ? AND user_id = ? AND expires > ?",
                                 (pairing.platform, pairing.user_id, pairing.created)).fetchone()
                if row is not None:
                    return Pairing(*row)
                db.execute("DELETE FROM pairing_codes WHERE platform = ? AND user_id = ?",
                           (pairing.platform, pairing.user_id))
                db.execute("INSERT INTO pairing_codes (code, platform, user_id, chat_id, created, expires) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (pairing.code, pairing.platform, pairing.user_id,
                                                         pairing.chat_id, pairing.created, pairing.expires))
                return pairing
        return await self._run(write)

    async def pairings(self, now: float) -> list[Pairing]:
        return await self._run(lambda db: [Pairing(*row) for row in db.execute(
            self._PAIRING + "WHERE expires > ? ORDER BY created", (now,))])

    async def redeem_pairing(self, code: str, by: str, now: float) -> Pairing | None:
        def write(db: sqlite3.Connection) -> Pairing | None:
            with _tx(db):
                row = db.execute(self._PAIRING + "WHERE code = ? AND expires > ?", (code, now)).fetchone()
                if row is None:
                    return None
                pairing = Pairing(*row)
                db.execute("DELETE FROM pairing_codes WHERE code = ?", (code,))
                _approve(db, pairing.platform, pairing.user_id, by, now)
                return pairing
        return await self._run(write)

    async def record_usage(self, record: UsageRecord) -> None:
        def write(db: sqlite3.Connection) -> None:
            with _tx(db):
                db.execute("INSERT INTO usage (at, platform, chat_id, thread_id, user_id, model, input_tokens, "
                           "output_tokens, estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (record.at, record.platform, record.chat_id, record.thread_id or "", record.user_id,
                            record.model, record.input_tokens, record.output_tokens, int(record.estimated)))
        await self._write(write)

    async def usage(self, since: float = 0.0) -> list[UsageRecord]:
        def read(db: sqlite3.Connection) -> list[UsageRecord]:
            rows = db.execute("SELECT at, platform, chat_id, thread_id, user_id, model, input_tokens, output_tokens, "
                              "estimated FROM usage WHERE at >= ? ORDER BY seq", (since,))
            return [UsageRecord(at, p, c, t or None, u, m, i, o, bool(e)) for at, p, c, t, u, m, i, o, e in rows]
        return await self._run(read)


def _approve(db: sqlite3.Connection, platform: str, user_id: str, by: str, now: float) -> None:
    db.execute("INSERT OR IGNORE INTO approved_users (platform, user_id, approved_at, approved_by) "
               "VALUES (?, ?, ?, ?)", (platform, user_id, now, by))


def _tx(db: sqlite3.Connection) -> Any:
    from .sqlite import _transaction

    return _transaction(db)
