"""``SQLiteStore``: the embedded default, one SQLite file (``<data dir>/state.db``) in WAL mode.

Why ``sqlite3`` in one dedicated thread rather than ``aiosqlite``: aiosqlite
is the same thing (the stdlib driver on a background thread) but each
statement is its own ``await``, so a transaction of several statements
would interleave with other tasks' statements on the shared connection
unless every caller also took a lock. Here each operation is one plain
function run whole on the store's own thread: every write is one
transaction by construction (``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back
on any error), operations are serialised without locks, and the event loop
only ever awaits a future. A caller cancelled mid-write does not cut the
write in half: the function finishes (commit or rollback) on its thread.
The hot writes of replies (``_write``) that queue up together are committed
together, each in its own savepoint (:mod:`.sqlite_queue`).

Failures become a :class:`StoreError` of one line naming the file. The file
is never deleted, truncated or recreated: a locked, unreadable, read-only
or corrupt database stays exactly as it was for its owner to look at.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from .base import (ConversationKey, ConversationStore, ConversationSummary, ReplyInFlight, ShownMessage, StoredResponse,
                   StoreError)
from .codec import (DEFAULT_MAX_RESPONSES, DEFAULT_MAX_UPDATES, DEFAULT_RESPONSE_BYTES, IN_FLIGHT_COLUMNS, decode,
                    decode_in_flight, encode, encode_shown, first_user_text, key_parts)
from .operator_sqlite import OPERATOR_SCHEMA, SQLiteOperatorRecords
from .outbound_sqlite import OUTBOUND_SCHEMA, SQLiteOutboundRecords
from .platform_values_sqlite import PLATFORM_VALUES_SCHEMA, SQLitePlatformValueRecords
from .room_context_sqlite import ROOM_CONTEXT_SCHEMA, SQLiteRoomContextRecords
from .sqlite_queue import StoreQueue
from .erasure import PER_CHAT, PER_PERSON, Forgotten, add, media_paths, own_chats, queries
from .policy import bound_newest_first, message_chars

T = TypeVar("T")

SCHEMA_VERSION = 1
#: Created idempotently at every open; a later version adds ``if version < N`` steps after it.
SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS conversations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    platform      TEXT NOT NULL,
    chat_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL DEFAULT '',          -- '' when the chat has no threads
    created       REAL NOT NULL,                     -- Unix time
    last_activity REAL NOT NULL,
    current       INTEGER NOT NULL DEFAULT 1,        -- 1: the next turn of this chat continues it
    turns         INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0,
    first_text    TEXT                               -- the first user message, clipped (listings)
);
CREATE UNIQUE INDEX IF NOT EXISTS conversations_current
    ON conversations (platform, chat_id, thread_id) WHERE current = 1;
CREATE INDEX IF NOT EXISTS conversations_recent ON conversations (last_activity);
CREATE INDEX IF NOT EXISTS conversations_key ON conversations (platform, chat_id, thread_id);  -- has_conversation
CREATE TABLE IF NOT EXISTS messages (
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq             INTEGER NOT NULL,                -- 0, 1, 2 ... within the conversation
    role            TEXT NOT NULL,
    message         TEXT NOT NULL,                   -- the chat message as JSON, tool_calls and all
    chars           INTEGER NOT NULL,                -- its size under the history policy
    PRIMARY KEY (conversation_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS responses (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL DEFAULT '',           -- the API key's fingerprint; '' when there are no keys
    created      REAL NOT NULL,
    response     TEXT NOT NULL,                      -- the Response object as sent (JSON)
    conversation TEXT NOT NULL,                      -- the messages up to and including it (JSON list)
    bytes        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_age ON responses (created);
CREATE TABLE IF NOT EXISTS updates (                 -- inbound update ids, so a redelivery across a restart is caught
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    platform  TEXT NOT NULL,
    update_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replies_in_flight (       -- replies streaming now; what a crash leaves is finished at start
    id         TEXT PRIMARY KEY,
    platform   TEXT NOT NULL,
    chat_id    TEXT NOT NULL,
    thread_id  TEXT,
    chat_kind  TEXT,
    message_id TEXT,                                 -- the person's message
    text       TEXT NOT NULL,                        -- its text
    owner      TEXT NOT NULL,                        -- the replica running (or recovering) it
    shown      TEXT NOT NULL DEFAULT '[]',           -- JSON: the messages shown so far, without cursor
    attempt    INTEGER NOT NULL DEFAULT 0,
    started    REAL NOT NULL
);
"""


class SQLiteStore(SQLiteOperatorRecords, SQLiteOutboundRecords, SQLitePlatformValueRecords, SQLiteRoomContextRecords,
                  ConversationStore):
    """Conversations and stored API responses in one SQLite file; see the module docstring."""

    def __init__(self, path: str | Path, *, history_messages: int = 40, history_chars: int = 60_000,
                 response_bytes: int = DEFAULT_RESPONSE_BYTES, max_responses: int = DEFAULT_MAX_RESPONSES,
                 max_updates: int = DEFAULT_MAX_UPDATES, busy_timeout: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self.history_messages = history_messages
        self.history_chars = history_chars
        self.response_bytes = response_bytes
        self.max_responses = max_responses
        self.max_updates = max_updates
        self.busy_timeout = busy_timeout
        self.clock = clock
        self._thread = threading.local()  # .db: the connection of the store's current thread
        self._queue = StoreQueue(self._call, self._db, self._error)  # the thread, and what waits for it

    # -- the thread ------------------------------------------------------------------------------------------

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(db, *args)`` on the store's thread, opening the database (and the thread) first if needed."""
        result: T = await self._queue.run(fn, args)
        return result

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`_run` for a write in a ``_transaction`` that may share its COMMIT with the writes queued beside it."""
        result: T = await self._queue.run(fn, args, True)
        return result

    def _call(self, fn: Callable[..., T], args: tuple) -> T:
        try:
            return fn(self._db(), *args)
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _db(self) -> sqlite3.Connection:
        """The store thread's connection, opened on first use."""
        try:
            db = getattr(self._thread, "db", None)
            if db is None:  # (per thread: a close() racing a new operation never shares a connection)
                db = self._thread.db = self._connect()
            return db
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.location}: cannot create its directory: {exc.strerror or exc}") from None
        if self.path.is_dir():
            raise StoreError(f"{self.location}: is a directory, not a database file")
        _create_private(self.path)
        db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            mode = self._switch_to_wal(db)
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.location}: cannot switch the database to WAL mode (got {mode})")
            db.execute("PRAGMA synchronous=NORMAL")   # WAL + NORMAL: a committed turn survives a process crash
            db.execute("PRAGMA foreign_keys=ON")
            with _transaction(db):
                for statement in _statements(SCHEMA + OPERATOR_SCHEMA + OUTBOUND_SCHEMA + PLATFORM_VALUES_SCHEMA
                                             + ROOM_CONTEXT_SCHEMA):
                    db.execute(statement)
                row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
                if row[0] is None:
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                elif row[0] > SCHEMA_VERSION:
                    raise StoreError(f"{self.location}: made by a newer hermes-gateway (schema {row[0]}, "
                                     f"this one knows {SCHEMA_VERSION}); upgrade hermes-gateway")
        except BaseException:
            db.close()
            raise
        return db

    def _switch_to_wal(self, db: sqlite3.Connection) -> str:
        """``PRAGMA journal_mode=WAL``, waiting (on the store's own thread) while another opener holds the file.

        SQLite answers this pragma "locked" at once, without its busy handler,
        when two processes open a new file together (two replicas starting,
        ``hermes-gateway history`` beside a starting gateway).
        """
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                return str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _error(self, exc: sqlite3.Error) -> StoreError:
        """One line naming the file and what a person can do about it."""
        text = str(exc)
        low = text.lower()
        if "locked" in low or "busy" in low:
            why = "the database is locked by another program (another hermes-gateway?); try again when it is done"
        elif "not a database" in low:
            why = "not an SQLite database (or an encrypted one); it was left untouched: move it aside to start afresh"
        elif "malformed" in low or "corrupt" in low:
            why = "the database is corrupt; it was left untouched (sqlite3's .recover can save what is readable)"
        elif "unable to open" in low:
            why = "cannot open the database file (check that it and its directory are readable and writable)"
        elif "readonly" in low or "read-only" in low:
            why = "the database is read-only (check the file's and its directory's permissions)"
        elif "disk i/o" in low or "full" in low:
            why = f"cannot write the database ({text})"
        else:
            why = text
        return StoreError(f"{self.location}: {why}")

    async def open(self) -> None:
        """Open (and create) the database now, so a bad file is reported before anything else happens."""
        await self._run(lambda db: None)

    async def close(self) -> None:
        """Close the connection and stop the thread, after every operation already asked for.

        A later operation opens both again: a write that arrives after the
        gateway stopped is kept rather than lost.
        """
        executor = self._queue.detach()
        if executor is None:
            return

        def shut() -> None:
            db, self._thread.db = getattr(self._thread, "db", None), None
            if db is not None:
                db.close()  # the last connection: SQLite checkpoints the WAL into the file and removes it
        try:
            await asyncio.get_running_loop().run_in_executor(executor, shut)
        finally:
            executor.shutdown(wait=False)

    # -- conversations ---------------------------------------------------------------------------------------

    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        return await self._run(self._history, key_parts(key))

    def _history(self, db: sqlite3.Connection, parts: tuple[str, str, str]) -> list[dict[str, Any]]:
        rows = db.execute(
            "SELECT m.message, m.chars FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "WHERE c.platform = ? AND c.chat_id = ? AND c.thread_id = ? AND c.current = 1 ORDER BY m.seq DESC",
            parts)
        try:
            return bound_newest_first(((decode(text), chars) for text, chars in rows),
                                      self.history_messages, self.history_chars)
        finally:
            rows.close()

    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]], *,
                          in_flight: str | None = None) -> None:
        messages = list(messages)
        if messages or in_flight is not None:
            await self._write(self._record, key_parts(key), messages, self.clock(), in_flight)

    def _record(self, db: sqlite3.Connection, parts: tuple[str, str, str], messages: list[dict[str, Any]],
                now: float, in_flight: str | None = None) -> None:
        with _transaction(db):
            if in_flight is not None:
                db.execute("DELETE FROM replies_in_flight WHERE id = ?", (in_flight,))
            if not messages:
                return
            row = db.execute("SELECT id, message_count FROM conversations WHERE platform = ? AND chat_id = ? "
                             "AND thread_id = ? AND current = 1", parts).fetchone()
            if row is None:
                cursor = db.execute("INSERT INTO conversations (platform, chat_id, thread_id, created, "
                                    "last_activity) VALUES (?, ?, ?, ?, ?)", (*parts, now, now))
                conversation_id, seq = cursor.lastrowid, 0
            else:
                conversation_id, seq = row
            for message in messages:  # encoded one by one inside the transaction: a bad one rolls back all
                db.execute("INSERT INTO messages (conversation_id, seq, role, message, chars) VALUES (?, ?, ?, ?, ?)",
                           (conversation_id, seq, str(message.get("role", "")), encode(message),
                            message_chars(message)))
                seq += 1
            db.execute("UPDATE conversations SET turns = turns + 1, message_count = ?, last_activity = ?, "
                       "first_text = COALESCE(first_text, ?) WHERE id = ?",
                       (seq, now, first_user_text(messages), conversation_id))

    async def new_conversation(self, key: ConversationKey) -> None:
        await self._run(self._new, key_parts(key))

    @staticmethod
    def _new(db: sqlite3.Connection, parts: tuple[str, str, str]) -> None:
        with _transaction(db):
            db.execute("UPDATE conversations SET current = 0 WHERE platform = ? AND chat_id = ? AND thread_id = ? "
                       "AND current = 1", parts)

    # -- listing ---------------------------------------------------------------------------------------------

    _SUMMARY = ("SELECT id, platform, chat_id, thread_id, turns, message_count, created, last_activity, "
                "COALESCE(first_text, ''), current FROM conversations ")

    @staticmethod
    def _summary(row: tuple) -> ConversationSummary:
        cid, platform, chat, thread, turns, count, created, last, first, current = row
        return ConversationSummary(cid, platform, chat, thread or None, turns, count, created, last, first,
                                   bool(current))

    async def current(self, key: ConversationKey) -> ConversationSummary | None:
        def read(db: sqlite3.Connection, parts: tuple[str, str, str]) -> ConversationSummary | None:
            row = db.execute(self._SUMMARY + "WHERE platform = ? AND chat_id = ? AND thread_id = ? AND current = 1",
                             parts).fetchone()
            return None if row is None else self._summary(row)
        return await self._run(read, key_parts(key))

    async def has_conversation(self, key: ConversationKey) -> bool:
        def read(db: sqlite3.Connection, parts: tuple[str, str, str]) -> bool:
            return db.execute("SELECT 1 FROM conversations WHERE platform = ? AND chat_id = ? AND thread_id = ? "
                              "LIMIT 1", parts).fetchone() is not None
        return await self._run(read, key_parts(key))

    async def list_conversations(self, limit: int = 50, offset: int = 0) -> list[ConversationSummary]:
        def read(db: sqlite3.Connection) -> list[ConversationSummary]:
            rows = db.execute(self._SUMMARY + "ORDER BY last_activity DESC, id DESC LIMIT ? OFFSET ?",
                              (max(0, limit), max(0, offset)))
            return [self._summary(r) for r in rows]
        return await self._run(read)

    async def summary(self, conversation_id: int) -> ConversationSummary | None:
        def read(db: sqlite3.Connection) -> ConversationSummary | None:
            row = db.execute(self._SUMMARY + "WHERE id = ?", (conversation_id,)).fetchone()
            return None if row is None else self._summary(row)
        return await self._run(read)

    async def conversation(self, conversation_id: int) -> list[dict[str, Any]] | None:
        def read(db: sqlite3.Connection) -> list[dict[str, Any]] | None:
            if db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone() is None:
                return None
            rows = db.execute("SELECT message FROM messages WHERE conversation_id = ? ORDER BY seq",
                              (conversation_id,))
            return [decode(text) for (text,) in rows]
        return await self._run(read)

    # -- stored responses ------------------------------------------------------------------------------------

    async def put_response(self, response_id: str, item: StoredResponse) -> None:
        await self._run(self._put_response, response_id, item, self.clock())

    def _put_response(self, db: sqlite3.Connection, response_id: str, item: StoredResponse, now: float) -> None:
        response, conversation = encode(item.response, "response"), encode(list(item.conversation), "response")
        size = len(response.encode()) + len(conversation.encode())
        with _transaction(db):
            db.execute("INSERT OR REPLACE INTO responses (id, owner, created, response, conversation, bytes) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (response_id, item.owner or "", now, response, conversation, size))
            total, count = db.execute("SELECT COALESCE(SUM(bytes), 0), COUNT(*) FROM responses").fetchone()
            if total <= self.response_bytes and count <= self.max_responses:
                return
            # The oldest go first until both budgets hold; the one just stored always stays.
            doomed: list[str] = []
            for old_id, old_size in db.execute("SELECT id, bytes FROM responses WHERE id != ? "
                                               "ORDER BY created, rowid", (response_id,)):
                if total <= self.response_bytes and count <= self.max_responses:
                    break
                doomed.append(old_id)
                total -= old_size
                count -= 1
            db.executemany("DELETE FROM responses WHERE id = ?", [(d,) for d in doomed])

    async def get_response(self, response_id: str, owner: str | None) -> StoredResponse | None:
        def read(db: sqlite3.Connection) -> StoredResponse | None:
            row = db.execute("SELECT response, conversation FROM responses WHERE id = ? AND owner = ?",
                             (response_id, owner or "")).fetchone()
            return None if row is None else StoredResponse(decode(row[0]), tuple(decode(row[1])), owner)
        return await self._run(read)

    async def delete_response(self, response_id: str, owner: str | None) -> bool:
        def delete(db: sqlite3.Connection) -> bool:
            with _transaction(db):
                return db.execute("DELETE FROM responses WHERE id = ? AND owner = ?",
                                  (response_id, owner or "")).rowcount > 0
        return await self._run(delete)

    # -- inbound dedupe --------------------------------------------------------------------------------------

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        rows = [(str(p), str(u)) for p, u in updates]
        if rows:
            await self._write(self._remember_updates, rows)

    def _remember_updates(self, db: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
        with _transaction(db):
            db.executemany("INSERT INTO updates (platform, update_id) VALUES (?, ?)", rows)
            db.execute("DELETE FROM updates WHERE seq <= (SELECT MAX(seq) FROM updates) - ?", (self.max_updates,))

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        def read(db: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = db.execute("SELECT platform, update_id FROM updates ORDER BY seq DESC LIMIT ?", (max(0, limit),))
            return [(p, u) for p, u in rows][::-1]
        return await self._run(read)

    # -- replies in flight -----------------------------------------------------------------------------------

    async def begin_reply(self, reply: ReplyInFlight) -> None:
        row = (reply.id, reply.platform, reply.chat_id, reply.thread_id, reply.chat_kind, reply.message_id,
               reply.text, reply.owner, encode_shown(reply.shown), reply.attempt, reply.started or self.clock())

        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute("INSERT OR REPLACE INTO replies_in_flight (id, platform, chat_id, thread_id, chat_kind, "
                           "message_id, text, owner, shown, attempt, started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           row)
        await self._write(write)

    async def update_reply(self, reply_id: str, shown: Sequence[ShownMessage]) -> None:
        encoded = encode_shown(shown)

        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute("UPDATE replies_in_flight SET shown = ? WHERE id = ?", (encoded, reply_id))
        await self._write(write)

    async def end_reply(self, reply_id: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute("DELETE FROM replies_in_flight WHERE id = ?", (reply_id,))
        await self._write(write)

    _IN_FLIGHT = f"SELECT {IN_FLIGHT_COLUMNS} FROM replies_in_flight "

    async def replies_in_flight(self) -> list[ReplyInFlight]:
        def read(db: sqlite3.Connection) -> list[ReplyInFlight]:
            return [decode_in_flight(r) for r in db.execute(self._IN_FLIGHT + "ORDER BY started, rowid")]
        return await self._run(read)

    async def forget_person(self, platform: str, user_id: str) -> Forgotten:
        return await self._run(self._forget, platform, user_id)

    @staticmethod
    def _forget(db: sqlite3.Connection, platform: str, user_id: str) -> Forgotten:
        q = queries("", "?")
        counts: dict[str, int] = {}
        media: list[str] = []
        with _transaction(db):
            candidates = [r[0] for r in db.execute(q["candidates"], (platform, user_id, platform, user_id))]
            others = [r[0] for r in db.execute(q["others"], (platform, user_id))]
            own, shared = own_chats(user_id, candidates, others)
            for chat in own:
                media += media_paths(r[0] for r in db.execute(q["media"], (platform, chat)))
                for what in PER_CHAT:
                    add(counts, what, db.execute(q[what], (platform, chat)).rowcount)
            for what in PER_PERSON:
                add(counts, what, db.execute(q[what], (platform, user_id)).rowcount)
        return Forgotten(counts, tuple(dict.fromkeys(media)), tuple(shared))

    async def claim_reply(self, reply_id: str, owner: str, new_owner: str) -> ReplyInFlight | None:
        def claim(db: sqlite3.Connection) -> ReplyInFlight | None:
            with _transaction(db):  # BEGIN IMMEDIATE: two processes claiming together are serialised here
                changed = db.execute("UPDATE replies_in_flight SET owner = ? WHERE id = ? AND owner = ?",
                                     (new_owner, reply_id, owner)).rowcount
                if not changed:
                    return None
                row = db.execute(self._IN_FLIGHT + "WHERE id = ?", (reply_id,)).fetchone()
                return None if row is None else decode_in_flight(row)
        return await self._run(claim)

    async def journal_mode(self) -> str:
        """The database's journal mode (``wal``), for tests and diagnostics."""
        return await self._run(lambda db: str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower())


class _transaction:
    """``with _transaction(db):`` one ``BEGIN IMMEDIATE`` ... ``COMMIT``, or a rollback on any error.

    Inside a transaction already open (the store thread's batch of writes, :mod:`.sqlite_queue`) it is a
    savepoint: released on success, rolled back to on any error, so one write's failure undoes that write alone.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.nested = False

    def __enter__(self) -> None:
        if self.db.in_transaction:
            self.nested = True
            self.db.execute("SAVEPOINT one_write")
            return
        self.db.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock half-way

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.nested:
            if exc_type is None:
                self.db.execute("RELEASE one_write")
                return
            try:
                self.db.execute("ROLLBACK TO one_write")
                self.db.execute("RELEASE one_write")
            except sqlite3.Error:
                pass  # the error ended the whole transaction: the batch sees it and runs its writes again alone
            return
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the error already ended the transaction


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only (0600), as ``chat_history`` is: it holds every
    conversation. SQLite gives its ``-wal`` and ``-shm`` files the database file's mode. An existing file
    keeps the mode its owner chose."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:  # it exists (its mode stays), or sqlite3.connect reports what is wrong, in its own words
        pass


def _statements(script: str) -> list[str]:
    """Split the schema into statements (``executescript`` would commit the transaction around it)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
