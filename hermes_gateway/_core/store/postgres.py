"""``PostgresStore``: conversations on PostgreSQL, so several gateway replicas share one memory.

``store.url: postgresql://user@host/dbname`` (or ``postgres://``; every
libpq URL parameter works, ``?sslmode=require`` and so on). N replicas of
``hermes-gateway run`` behind one bot then see each other's turns at once:
a chat whose next message lands on another replica continues where it was,
and ``/new`` on one is seen by all.

Why these choices:

* **psycopg 3, async, with ``psycopg_pool.AsyncConnectionPool``**: the
  event loop never waits on the database, and a pool of a few connections
  lets the turns of different chats overlap. Connections are in autocommit
  mode; every operation that writes runs in one explicit transaction,
  rolled back on any error or cancellation, so a turn is whole or absent,
  never half-stored. A turn is recorded in one round trip (its statements
  go as one pipeline); a pooled connection idle for 2 s is checked before
  use, so one left over from before a server restart is never handed out.
* **Concurrent writers on one chat** (two replicas, or two tasks): the
  chat's current conversation is created with ``INSERT ... ON CONFLICT DO
  NOTHING`` against a partial unique index (one current conversation per
  chat), then locked with ``SELECT ... FOR UPDATE``, so appends to it are
  serialised and message numbers never collide; a ``/new`` committed in
  between is seen and the turn is retried into the fresh conversation.
* **A database that goes away**: the operation that meets it fails; the
  next ones first try one direct connection, so they fail in milliseconds
  with libpq's reason ("Connection refused") instead of waiting out the
  pool, and the first that succeeds replaces the pool, so the store is
  back the moment the database is. The pool's own reconnect warnings are
  left out of the log (the gateway logs the outage once a minute).
* **The schema** is created, or migrated, at open, inside one transaction
  that holds ``pg_advisory_xact_lock``: replicas starting together wait for
  each other and exactly one creates it; the others find it done. A
  version table refuses a database made by a newer hermes-gateway.
* **Nothing hangs forever**: a connect timeout, a server-side
  ``statement_timeout`` (and ``idle_in_transaction_session_timeout``, so a
  replica that froze mid-transaction does not hold a chat's lock), TCP
  keepalives and a bound on every operation as a whole. A database that is
  unreachable or goes away becomes a :class:`StoreError` of one line naming
  ``host:port/dbname``, never the password.
* **Lazy**: nothing connects until the first operation (or ``open()``),
  and psycopg is imported only when a PostgreSQL URL is configured, so the
  CLI does not pay for it with the default SQLite store.

The tables carry a ``hermes_`` prefix, so a database shared with other
applications is fine. Messages are stored as JSON text through the same
codec as SQLite (exactly what was given comes back).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Sequence, TypeVar

from ..secrets import protect, scrub
from .base import (ConversationKey, ConversationStore, ConversationSummary, ReplyInFlight, ShownMessage, StoredResponse,
                   StoreError)
from .codec import (DEFAULT_MAX_RESPONSES, DEFAULT_MAX_UPDATES, DEFAULT_RESPONSE_BYTES, IN_FLIGHT_COLUMNS, decode,
                    decode_in_flight, encode, encode_shown, first_user_text, key_parts)
from .operator_postgres import OPERATOR_MARKER, OPERATOR_SCHEMA, PostgresOperatorRecords
from .outbound_postgres import OUTBOUND_MARKER, OUTBOUND_SCHEMA, PostgresOutboundRecords
from .platform_values_postgres import (PLATFORM_VALUES_MARKER, PLATFORM_VALUES_SCHEMA,
                                      PostgresPlatformValueRecords)
from .room_context_postgres import ROOM_CONTEXT_MARKER, ROOM_CONTEXT_SCHEMA, PostgresRoomContextRecords
from .pgurl import describe, url_passwords
from .erasure import PER_CHAT, PER_PERSON, Forgotten, add, media_paths, own_chats, queries
from .policy import bound_newest_first, message_chars

try:  # psycopg is the ``postgres`` extra: say how to get it rather than fail with an ImportError
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import AsyncConnectionPool, PoolClosed, PoolTimeout
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]
    _IMPORT_ERROR: ImportError | None = _missing
else:
    _IMPORT_ERROR = None

T = TypeVar("T")
log = logging.getLogger(__name__)
POOL_NAME = "hermes-store"
#: A pooled connection idle for longer than this is checked (one empty query) before it is used.
CHECK_AFTER = 2.0


class _QuietReconnects(logging.Filter):
    """Drop the pool's own "error connecting" warnings (a few lines each time the database goes away):
    the store reports an outage itself, as the one-line StoreError of the operation that met it."""

    def filter(self, record: logging.LogRecord) -> bool:
        ours = isinstance(record.args, tuple) and POOL_NAME in record.args
        return not (ours and str(record.msg).startswith(("error connecting in", "reconnection attempt in")))


logging.getLogger("psycopg.pool").addFilter(_QuietReconnects())

SCHEMA_VERSION = 2  # 2: hermes_replies_in_flight (every step below is idempotent, so 1 -> 2 runs them all)
#: The migration's advisory lock, in the two-int key space ("herm", "es" + 1): no clash with row keys.
MIGRATION_LOCK = (0x6865726D, 0x65730001)
#: Serialises stored-response eviction across replicas (the budget is a whole-table property).
RESPONSES_LOCK = (0x6865726D, 0x65730002)

#: Run in order in the migration transaction; each is idempotent. A later version adds steps after them.
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hermes_schema_version ("
    " version INTEGER NOT NULL, applied_at DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hermes_conversations ("
    " id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    " platform      TEXT NOT NULL,"
    " chat_id       TEXT NOT NULL,"
    " thread_id     TEXT NOT NULL DEFAULT '',"           # '' when the chat has no threads
    " created       DOUBLE PRECISION NOT NULL,"          # Unix time
    " last_activity DOUBLE PRECISION NOT NULL,"
    " current       BOOLEAN NOT NULL DEFAULT TRUE,"      # the next turn of this chat continues it
    " turns         INTEGER NOT NULL DEFAULT 0,"
    " message_count INTEGER NOT NULL DEFAULT 0,"
    " first_text    TEXT)",                              # the first user message, clipped (listings)
    "CREATE UNIQUE INDEX IF NOT EXISTS hermes_conversations_current"
    " ON hermes_conversations (platform, chat_id, thread_id) WHERE current",
    "CREATE INDEX IF NOT EXISTS hermes_conversations_recent ON hermes_conversations (last_activity)",
    "CREATE INDEX IF NOT EXISTS hermes_conversations_key ON hermes_conversations (platform, chat_id, thread_id)",
    "CREATE TABLE IF NOT EXISTS hermes_messages ("
    " conversation_id BIGINT NOT NULL REFERENCES hermes_conversations (id),"
    " seq             INTEGER NOT NULL,"                 # 0, 1, 2 ... within the conversation
    " role            TEXT NOT NULL,"
    " message         TEXT NOT NULL,"                    # the chat message as JSON, tool_calls and all
    " chars           INTEGER NOT NULL,"                 # its size under the history policy
    " PRIMARY KEY (conversation_id, seq))",
    "CREATE TABLE IF NOT EXISTS hermes_responses ("
    " id           TEXT PRIMARY KEY,"
    " owner        TEXT NOT NULL DEFAULT '',"            # the API key's fingerprint; '' when there are no keys
    " created      DOUBLE PRECISION NOT NULL,"
    " seq          BIGSERIAL,"                           # insertion order among equal `created`
    " response     TEXT NOT NULL,"                       # the Response object as sent (JSON)
    " conversation TEXT NOT NULL,"                       # the messages up to and including it (JSON list)
    " bytes        INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hermes_responses_age ON hermes_responses (created, seq)",
    "CREATE TABLE IF NOT EXISTS hermes_updates ("       # inbound update ids, for dedupe across restarts
    " seq       BIGSERIAL PRIMARY KEY,"
    " platform  TEXT NOT NULL,"
    " update_id TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hermes_replies_in_flight ("  # replies streaming now (crash recovery)
    " id         TEXT PRIMARY KEY,"
    " platform   TEXT NOT NULL,"
    " chat_id    TEXT NOT NULL,"
    " thread_id  TEXT,"
    " chat_kind  TEXT,"
    " message_id TEXT,"                                  # the person's message
    " text       TEXT NOT NULL,"                         # its text
    " owner      TEXT NOT NULL,"                         # the replica running (or recovering) it
    " shown      TEXT NOT NULL DEFAULT '[]',"            # JSON: the messages shown so far, without cursor
    " attempt    INTEGER NOT NULL DEFAULT 0,"
    " started    DOUBLE PRECISION NOT NULL,"
    " seq        BIGSERIAL)",
)


class PostgresStore(PostgresOperatorRecords, PostgresOutboundRecords, PostgresPlatformValueRecords,
                    PostgresRoomContextRecords, ConversationStore):
    """Conversations and stored API responses in a PostgreSQL database; see the module docstring."""

    def __init__(self, url: str, *, history_messages: int = 40, history_chars: int = 60_000,
                 response_bytes: int = DEFAULT_RESPONSE_BYTES, max_responses: int = DEFAULT_MAX_RESPONSES,
                 max_updates: int = DEFAULT_MAX_UPDATES, pool_size: int = 8, connect_timeout: float = 5.0,
                 statement_timeout: float = 15.0, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.location = f"PostgreSQL at {describe(url)}"  # what every error names (never the password)
        protect(*url_passwords(url))  # a password in the URL never reaches a log line
        self.history_messages = history_messages
        self.history_chars = history_chars
        self.response_bytes = response_bytes
        self.max_responses = max_responses
        self.max_updates = max_updates
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
        #: The bound on one whole operation: waiting for a connection, then its statements.
        self.operation_timeout = connect_timeout + statement_timeout + 5.0
        self.clock = clock
        self._pool: Any = None                       # AsyncConnectionPool, once open
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opening: asyncio.Lock | None = None
        self._failing = False                        # the last operation lost the database
        self._closing: set[asyncio.Task] = set()     # pools replaced after an outage, closing
        self._used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()  # conn -> last handed back

    # -- connecting ------------------------------------------------------------------------------------------

    def _connect_kwargs(self) -> dict[str, Any]:
        """libpq parameters added to the URL's own (which win where they say otherwise)."""
        given = self._given_params()
        options = given.get("options", "")
        for name, value in (("statement_timeout", int(self.statement_timeout * 1000)),
                            ("idle_in_transaction_session_timeout", int(self.statement_timeout * 4000))):
            if name not in options:
                options = f"{options} -c {name}={value}".strip()
        extra: dict[str, Any] = {"options": options, "autocommit": True}
        defaults = {"connect_timeout": max(1, round(self.connect_timeout)), "application_name": "hermes-gateway",
                    "keepalives": 1, "keepalives_idle": 15, "keepalives_interval": 5, "keepalives_count": 3,
                    "tcp_user_timeout": int(self.operation_timeout * 1000)}
        extra.update({k: v for k, v in defaults.items() if k not in given})
        return extra

    def _given_params(self) -> dict[str, Any]:
        try:
            return conninfo_to_dict(self.url)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: store.url is not a valid PostgreSQL URL: {_first_line(exc)}") from None

    async def _ready_pool(self) -> Any:
        """The open pool of the running event loop, opening it (and migrating the schema) first if needed."""
        if _IMPORT_ERROR is not None:
            raise StoreError(f"{self.location}: store.url is PostgreSQL, which needs psycopg: "
                             f"pip install 'hermes-gateway[postgres]'")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # first use, or a store handed to a new event loop (its old pool died with it)
            self._loop, self._pool, self._opening = loop, None, asyncio.Lock()
        if self._pool is not None:
            return self._pool
        assert self._opening is not None
        async with self._opening:
            if self._pool is None:
                try:
                    async with asyncio.timeout(self.connect_timeout + 1):
                        conn = await psycopg.AsyncConnection.connect(self.url, **self._connect_kwargs())
                except (psycopg.Error, TimeoutError) as exc:
                    raise self._error(exc, connecting=True) from None
                try:
                    async with asyncio.timeout(self.operation_timeout):
                        await self._migrate(conn)
                except (psycopg.Error, TimeoutError) as exc:
                    raise self._error(exc, doing="cannot create or update the schema: ") from None
                finally:
                    await conn.close()
                self._pool = await self._new_pool()
        return self._pool

    async def _new_pool(self) -> Any:
        """Connections made on demand (none kept while idle), checked before they are handed out after a pause."""
        pool = AsyncConnectionPool(self.url, kwargs=self._connect_kwargs(), min_size=0, max_size=self.pool_size,
                                   open=False, timeout=self.connect_timeout, name=POOL_NAME,
                                   check=self._check)
        await pool.open(wait=False)
        return pool

    async def _check_encoding(self, conn: Any) -> None:
        """Refuse a database whose encoding is not UTF-8: in SQL_ASCII (what a plain C locale gives) psycopg
        hands text back as bytes, and everything reading the history fails later, far from the cause."""
        encoding = (await (await conn.execute("SHOW server_encoding")).fetchone())[0]
        if isinstance(encoding, bytes):
            encoding = encoding.decode("ascii", "replace")
        if str(encoding).upper() not in ("UTF8", "UTF-8"):
            name = conn.info.dbname or "hermes"
            raise StoreError(f"{self.location}: the database's encoding is {encoding}, not UTF8 (text would come "
                             f"back as bytes); create it in UTF-8: createdb -E UTF8 -T template0 {name}")

    async def _migrate(self, conn: Any) -> None:
        """Create (or bring up to date) the schema, once, whoever else is starting at the same moment."""
        await self._check_encoding(conn)
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", MIGRATION_LOCK)
            found = await (await conn.execute("SELECT to_regclass('hermes_schema_version')")).fetchone()
            version = None
            if found[0] is not None:
                version = (await (await conn.execute("SELECT MAX(version) FROM hermes_schema_version")).fetchone())[0]
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(f"{self.location}: made by a newer hermes-gateway (schema {version}, this one "
                                 f"knows {SCHEMA_VERSION}); upgrade hermes-gateway")
            if version != SCHEMA_VERSION:
                for statement in SCHEMA:
                    await conn.execute(statement)
                await conn.execute("INSERT INTO hermes_schema_version (version, applied_at) VALUES (%s, %s)",
                                   (SCHEMA_VERSION, time.time()))
            marker = await (await conn.execute("SELECT to_regclass(%s)", (OPERATOR_MARKER,))).fetchone()
            if marker[0] is None:  # the operator's tables (issue 23), also on a database made before them
                for statement in OPERATOR_SCHEMA:
                    await conn.execute(statement)
            marker = await (await conn.execute("SELECT to_regclass(%s)", (OUTBOUND_MARKER,))).fetchone()
            if marker[0] is None:  # schedules' runs and reminders (issue 24), also on an older database
                for statement in OUTBOUND_SCHEMA:
                    await conn.execute(statement)
            marker = await (await conn.execute("SELECT to_regclass(%s)", (PLATFORM_VALUES_MARKER,))).fetchone()
            if marker[0] is None:  # the platforms' own small values (issue 35), also on an older database
                for statement in PLATFORM_VALUES_SCHEMA:
                    await conn.execute(statement)
            marker = await (await conn.execute("SELECT to_regclass(%s)", (ROOM_CONTEXT_MARKER,))).fetchone()
            if marker[0] is None:  # the groups' room context (issue 38), also on an older database
                for statement in ROOM_CONTEXT_SCHEMA:
                    await conn.execute(statement)

    def _error(self, exc: BaseException, *, connecting: bool = False, doing: str = "") -> StoreError:
        """One line naming host:port/dbname and what went wrong (libpq's words, never the password)."""
        if isinstance(exc, StoreError):
            return exc
        if isinstance(exc, TimeoutError):
            why = f"no answer within {self.operation_timeout:g} s (is the database server up and reachable?)"
        elif isinstance(exc, PoolTimeout):
            why = f"no free connection within {self.connect_timeout:g} s (all {self.pool_size} busy)"
        elif connecting:
            why = f"cannot connect: {_first_line(exc)}"
        elif isinstance(exc, psycopg.errors.QueryCanceled):
            why = f"a statement took longer than {self.statement_timeout:g} s and was cancelled"
        elif isinstance(exc, psycopg.OperationalError):
            why = f"the connection failed: {_first_line(exc)}"
        else:
            why = _first_line(exc)
        return StoreError(scrub(f"{self.location}: {doing}{why}"))

    async def _check(self, conn: Any) -> None:
        """The pool's check before handing ``conn`` out: one empty round trip, skipped for a connection used
        within :data:`CHECK_AFTER` seconds (a busy replica pays nothing; one idle across a server restart
        is found dead here, not by the operation)."""
        if time.monotonic() - self._used.get(conn, -CHECK_AFTER) < CHECK_AFTER:
            return
        await AsyncConnectionPool.check_connection(conn)

    async def _probe(self) -> None:
        """While the database is failing: one direct connection attempt, so an operation fails in
        milliseconds with libpq's reason (refused, no route...) instead of waiting out the pool's timeout."""
        try:
            async with asyncio.timeout(self.connect_timeout + 1):
                conn = await psycopg.AsyncConnection.connect(self.url, **self._connect_kwargs())
        except (psycopg.Error, TimeoutError) as exc:
            raise self._error(exc, connecting=True) from None
        await conn.close()
        self._failing = False
        # The database is back. The pool may still be backing off between reconnection attempts (seconds);
        # a fresh one connects now. The old one closes its connections as their operations hand them back.
        old, self._pool = self._pool, await self._new_pool()
        if old is not None:
            closing = asyncio.get_running_loop().create_task(old.close(timeout=self.operation_timeout))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A pooled connection; a pool closed by a racing ``close()`` is reopened once."""
        for attempt in (1, 2):
            await self._ready_pool()
            if self._failing:
                assert self._opening is not None
                async with self._opening:  # one probe at a time: the others then see its outcome
                    if self._failing:
                        await self._probe()
            pool = self._pool
            try:
                if pool is None:
                    raise PoolClosed("closed meanwhile")
                conn = await self._getconn(pool)
            except PoolClosed:
                if attempt == 2:
                    raise
                continue
            try:
                yield conn
            finally:
                self._used[conn] = time.monotonic()
                await pool.putconn(conn)  # a closed pool closes it; a broken one is discarded
            return

    async def _getconn(self, pool: Any) -> Any:
        """A free connection. The pool's wait (``connect_timeout``) ending while every one of its connections is
        open and out with an operation means a busy database, not a lost one: a burst of a thousand replies
        queues behind 8 connections, and on a loaded machine longer than 5 s. That wait goes on, bounded by the
        operation's own ``operation_timeout``; taking it for an outage failed the operation, replaced the pool
        and counted an outage for a database that answered (bench/README.md, "4. Every core")."""
        while True:
            try:
                return await pool.getconn()
            except PoolTimeout:
                stats = pool.get_stats()
                if stats.get("pool_size", 0) < self.pool_size or stats.get("pool_available", 0) > 0:
                    raise  # the pool could not open a connection it may have: the database may be gone

    async def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, transaction: bool = False) -> T:
        """``await fn(conn, *args)`` on a pooled connection, bounded in time, errors as one-line StoreErrors."""
        try:
            async with asyncio.timeout(self.operation_timeout):
                async with self._connection() as conn:
                    if not transaction:
                        return await fn(conn, *args)
                    async with conn.transaction():
                        return await fn(conn, *args)
        except StoreError:
            raise
        except PoolTimeout as exc:  # no connection in time: the database is down (say why), or every one is busy
            self._failing = True
            await self._probe()
            raise self._error(exc) from None
        except (psycopg.Error, TimeoutError) as exc:
            if isinstance(exc, (psycopg.OperationalError, TimeoutError)):
                self._failing = True  # (the next operation probes first, and so fails fast while it lasts)
            raise self._error(exc) from None
        except UnicodeEncodeError as exc:  # a lone surrogate in a message: not storable text
            raise StoreError(f"{self.location}: cannot store text that is not valid Unicode: {exc.reason}") from None

    async def open(self) -> None:
        """Connect (and create or migrate the schema) now, so an unreachable database is reported first."""
        await self._ready_pool()

    async def close(self) -> None:
        """Close the pool (after the operations holding a connection); a later operation opens it again."""
        pool, self._pool = self._pool, None
        if pool is not None and self._loop is asyncio.get_running_loop():
            await pool.close(timeout=self.operation_timeout)

    # -- conversations ---------------------------------------------------------------------------------------

    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        async def read(conn: Any, parts: tuple[str, str, str]) -> list[dict[str, Any]]:
            # newest first, and no more rows than the policy could ever keep
            cursor = await conn.execute(
                "SELECT m.message, m.chars FROM hermes_messages m JOIN hermes_conversations c"
                " ON c.id = m.conversation_id WHERE c.platform = %s AND c.chat_id = %s AND c.thread_id = %s"
                " AND c.current ORDER BY m.seq DESC LIMIT %s", (*parts, self.history_messages))
            rows = await cursor.fetchall()
            return bound_newest_first(((decode(text), chars) for text, chars in rows),
                                      self.history_messages, self.history_chars)
        return await self._run(read, key_parts(key))

    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]], *,
                          in_flight: str | None = None) -> None:
        # encoded before any statement: a message that is not JSON stores nothing of the turn
        rows = [(str(m.get("role", "")), encode(m), message_chars(m)) for m in messages]
        if rows:
            await self._run(self._record, key_parts(key), rows, first_user_text(messages), self.clock(), in_flight)
        elif in_flight is not None:
            await self.end_reply(in_flight)

    #: Appends a turn to the chat's current conversation, locked (FOR UPDATE) so concurrent appends from
    #: other tasks or replicas queue behind it and message numbers never collide. No row back: a /new
    #: committed between the INSERT and this statement retired the conversation, and nothing was written.
    _APPEND = (
        "WITH conv AS (SELECT id, message_count FROM hermes_conversations WHERE platform = %(p)s"
        " AND chat_id = %(c)s AND thread_id = %(t)s AND current FOR UPDATE),"
        " added AS (INSERT INTO hermes_messages (conversation_id, seq, role, message, chars)"
        " SELECT conv.id, conv.message_count + m.n - 1, m.role, m.message, m.chars FROM conv,"
        " unnest(%(roles)s::text[], %(texts)s::text[], %(chars)s::int[]) WITH ORDINALITY AS m(role, message, chars, n))"
        " UPDATE hermes_conversations c SET turns = c.turns + 1, message_count = conv.message_count + %(count)s,"
        " last_activity = %(now)s, first_text = COALESCE(c.first_text, %(first)s) FROM conv WHERE c.id = conv.id"
        " RETURNING c.id")

    async def _record(self, conn: Any, parts: tuple[str, str, str], rows: list[tuple[str, str, int]],
                      first_text: str | None, now: float, in_flight: str | None = None) -> None:
        """One transaction, sent as one pipeline: a single round trip to the server in the usual case."""
        platform, chat, thread = parts
        params = {"p": platform, "c": chat, "t": thread, "now": now, "first": first_text, "count": len(rows),
                  "roles": [r[0] for r in rows], "texts": [r[1] for r in rows], "chars": [r[2] for r in rows]}
        for _ in range(10):  # each retry means a /new committed in between: at most a few
            async with conn.pipeline():
                async with conn.transaction():
                    await conn.execute(
                        "INSERT INTO hermes_conversations (platform, chat_id, thread_id, created, last_activity)"
                        " VALUES (%(p)s, %(c)s, %(t)s, %(now)s, %(now)s)"
                        " ON CONFLICT (platform, chat_id, thread_id) WHERE current DO NOTHING", params)
                    cursor = await conn.execute(self._APPEND, params)
                    if in_flight is not None:
                        await conn.execute("DELETE FROM hermes_replies_in_flight WHERE id = %s", (in_flight,))
                row = await cursor.fetchone()
            if row is not None:
                return
        raise StoreError(f"{self.location}: the conversation kept being replaced while a turn was recorded")

    async def new_conversation(self, key: ConversationKey) -> None:
        async def new(conn: Any, parts: tuple[str, str, str]) -> None:
            await conn.execute("UPDATE hermes_conversations SET current = FALSE WHERE platform = %s"
                               " AND chat_id = %s AND thread_id = %s AND current", parts)
        await self._run(new, key_parts(key), transaction=True)

    # -- listing ---------------------------------------------------------------------------------------------

    _SUMMARY = ("SELECT id, platform, chat_id, thread_id, turns, message_count, created, last_activity,"
                " COALESCE(first_text, ''), current FROM hermes_conversations ")

    @staticmethod
    def _summary(row: tuple) -> ConversationSummary:
        cid, platform, chat, thread, turns, count, created, last, first, current = row
        return ConversationSummary(int(cid), platform, chat, thread or None, turns, count, created, last, first,
                                   bool(current))

    async def _one_summary(self, where: str, params: tuple) -> ConversationSummary | None:
        async def read(conn: Any) -> ConversationSummary | None:
            row = await (await conn.execute(self._SUMMARY + where, params)).fetchone()
            return None if row is None else self._summary(row)
        return await self._run(read)

    async def current(self, key: ConversationKey) -> ConversationSummary | None:
        return await self._one_summary("WHERE platform = %s AND chat_id = %s AND thread_id = %s AND current",
                                       key_parts(key))

    async def has_conversation(self, key: ConversationKey) -> bool:
        async def read(conn: Any, parts: tuple[str, str, str]) -> bool:
            return await (await conn.execute("SELECT 1 FROM hermes_conversations WHERE platform = %s"
                                             " AND chat_id = %s AND thread_id = %s LIMIT 1", parts)).fetchone() \
                is not None
        return await self._run(read, key_parts(key))

    async def list_conversations(self, limit: int = 50, offset: int = 0) -> list[ConversationSummary]:
        async def read(conn: Any) -> list[ConversationSummary]:
            cursor = await conn.execute(self._SUMMARY + "ORDER BY last_activity DESC, id DESC LIMIT %s OFFSET %s",
                                        (max(0, limit), max(0, offset)))
            return [self._summary(r) for r in await cursor.fetchall()]
        return await self._run(read)

    async def summary(self, conversation_id: int) -> ConversationSummary | None:
        if not _fits_bigint(conversation_id):
            return None
        return await self._one_summary("WHERE id = %s", (conversation_id,))

    async def conversation(self, conversation_id: int) -> list[dict[str, Any]] | None:
        if not _fits_bigint(conversation_id):
            return None

        async def read(conn: Any) -> list[dict[str, Any]] | None:
            # one statement: no row for an unknown id, one NULL for a conversation without messages
            cursor = await conn.execute(
                "SELECT m.message FROM hermes_conversations c LEFT JOIN hermes_messages m ON m.conversation_id = c.id"
                " WHERE c.id = %s ORDER BY m.seq", (conversation_id,))
            found = await cursor.fetchall()
            return None if not found else [decode(text) for (text,) in found if text is not None]
        return await self._run(read)

    # -- stored responses ------------------------------------------------------------------------------------

    async def put_response(self, response_id: str, item: StoredResponse) -> None:
        response, conversation = encode(item.response, "response"), encode(list(item.conversation), "response")
        size = len(response.encode()) + len(conversation.encode())

        async def put(conn: Any) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", RESPONSES_LOCK)
            await conn.execute(
                "INSERT INTO hermes_responses (id, owner, created, response, conversation, bytes)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner,"
                " created = EXCLUDED.created, seq = DEFAULT, response = EXCLUDED.response,"
                " conversation = EXCLUDED.conversation, bytes = EXCLUDED.bytes",
                (response_id, item.owner or "", self.clock(), response, conversation, size))
            total, count = await (await conn.execute(
                "SELECT COALESCE(SUM(bytes), 0), COUNT(*) FROM hermes_responses")).fetchone()
            if total <= self.response_bytes and count <= self.max_responses:
                return
            # The oldest go first until both budgets hold; the one just stored always stays. Keeping the
            # newest whose running totals (with the new one) fit is the same as dropping the oldest one by one.
            await conn.execute(
                "DELETE FROM hermes_responses r USING (SELECT id, SUM(bytes) OVER newest AS running,"
                " ROW_NUMBER() OVER newest AS n FROM hermes_responses WHERE id <> %(id)s"
                " WINDOW newest AS (ORDER BY created DESC, seq DESC)) old"
                " WHERE r.id = old.id AND (old.running + %(size)s > %(bytes)s OR old.n + 1 > %(count)s)",
                {"id": response_id, "size": size, "bytes": self.response_bytes, "count": self.max_responses})
        await self._run(put, transaction=True)

    async def get_response(self, response_id: str, owner: str | None) -> StoredResponse | None:
        async def read(conn: Any) -> StoredResponse | None:
            row = await (await conn.execute("SELECT response, conversation FROM hermes_responses"
                                            " WHERE id = %s AND owner = %s", (response_id, owner or ""))).fetchone()
            return None if row is None else StoredResponse(decode(row[0]), tuple(decode(row[1])), owner)
        return await self._run(read)

    async def delete_response(self, response_id: str, owner: str | None) -> bool:
        async def delete(conn: Any) -> bool:
            cursor = await conn.execute("DELETE FROM hermes_responses WHERE id = %s AND owner = %s",
                                        (response_id, owner or ""))
            return cursor.rowcount > 0
        return await self._run(delete, transaction=True)

    # -- inbound dedupe --------------------------------------------------------------------------------------

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        rows = [(str(p), str(u)) for p, u in updates]
        if not rows:
            return

        async def remember(conn: Any) -> None:
            async with conn.cursor() as cursor:
                await cursor.executemany("INSERT INTO hermes_updates (platform, update_id) VALUES (%s, %s)", rows)
            await conn.execute("DELETE FROM hermes_updates WHERE seq <= (SELECT MAX(seq) FROM hermes_updates) - %s",
                               (self.max_updates,))
        await self._run(remember, transaction=True)

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        async def read(conn: Any) -> list[tuple[str, str]]:
            cursor = await conn.execute("SELECT platform, update_id FROM hermes_updates ORDER BY seq DESC LIMIT %s",
                                        (max(0, limit),))
            return [(p, u) for p, u in await cursor.fetchall()][::-1]
        return await self._run(read)

    # -- replies in flight -----------------------------------------------------------------------------------

    async def begin_reply(self, reply: ReplyInFlight) -> None:
        row = (reply.id, reply.platform, reply.chat_id, reply.thread_id, reply.chat_kind, reply.message_id,
               reply.text, reply.owner, encode_shown(reply.shown), reply.attempt, reply.started or self.clock())

        async def write(conn: Any) -> None:
            await conn.execute(
                "INSERT INTO hermes_replies_in_flight (id, platform, chat_id, thread_id, chat_kind, message_id, text,"
                " owner, shown, attempt, started) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, shown = EXCLUDED.shown,"
                " attempt = EXCLUDED.attempt, text = EXCLUDED.text, message_id = EXCLUDED.message_id", row)
        await self._run(write)

    async def update_reply(self, reply_id: str, shown: Sequence[ShownMessage]) -> None:
        encoded = encode_shown(shown)

        async def write(conn: Any) -> None:
            await conn.execute("UPDATE hermes_replies_in_flight SET shown = %s WHERE id = %s", (encoded, reply_id))
        await self._run(write)

    async def end_reply(self, reply_id: str) -> None:
        async def write(conn: Any) -> None:
            await conn.execute("DELETE FROM hermes_replies_in_flight WHERE id = %s", (reply_id,))
        await self._run(write)

    _IN_FLIGHT = f"SELECT {IN_FLIGHT_COLUMNS} FROM hermes_replies_in_flight "

    async def replies_in_flight(self) -> list[ReplyInFlight]:
        async def read(conn: Any) -> list[ReplyInFlight]:
            cursor = await conn.execute(self._IN_FLIGHT + "ORDER BY started, seq")
            return [decode_in_flight(r) for r in await cursor.fetchall()]
        return await self._run(read)

    async def forget_person(self, platform: str, user_id: str) -> Forgotten:
        q = queries("hermes_", "%s")

        async def write(conn: Any) -> Forgotten:
            counts: dict[str, int] = {}
            media: list[str] = []
            cursor = await conn.execute(q["candidates"], (platform, user_id, platform, user_id))
            candidates = [r[0] for r in await cursor.fetchall()]
            others = [r[0] for r in await (await conn.execute(q["others"], (platform, user_id))).fetchall()]
            own, shared = own_chats(user_id, candidates, others)
            for chat in own:
                rows = await (await conn.execute(q["media"], (platform, chat))).fetchall()
                media += media_paths(r[0] for r in rows)
                for what in PER_CHAT:
                    add(counts, what, (await conn.execute(q[what], (platform, chat))).rowcount)
            for what in PER_PERSON:
                add(counts, what, (await conn.execute(q[what], (platform, user_id))).rowcount)
            return Forgotten(counts, tuple(dict.fromkeys(media)), tuple(shared))
        return await self._run(write, transaction=True)

    async def claim_reply(self, reply_id: str, owner: str, new_owner: str) -> ReplyInFlight | None:
        async def claim(conn: Any) -> ReplyInFlight | None:  # one statement: the row lock makes one claimer win
            cursor = await conn.execute(
                "UPDATE hermes_replies_in_flight SET owner = %s WHERE id = %s AND owner = %s"
                " RETURNING " + IN_FLIGHT_COLUMNS, (new_owner, reply_id, owner))
            row = await cursor.fetchone()
            return None if row is None else decode_in_flight(row)
        return await self._run(claim)


def _first_line(exc: BaseException) -> str:
    """libpq's message without its hints and details: ``connection to server at ... failed: Connection refused``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if " failed: " in text:  # 'connection failed: connection to server at "h", port 5432 failed: REASON'
        text = text.rsplit(" failed: ", 1)[1]
    return text.strip()


def _fits_bigint(value: int) -> bool:
    return -(2 ** 63) <= value < 2 ** 63
