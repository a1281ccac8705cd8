"""What only the PostgreSQL store can get wrong: replicas sharing one database, start-up races, a database
that is unreachable or goes away. Against a real server (tests/store/conftest.py); the shared contract is in
test_store_contract.py."""

from __future__ import annotations

import asyncio
import logging
import time

import psycopg
import pytest

from hermes_gateway import Incoming
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.platform import RateBudget
from hermes_gateway._core.store import ConversationKey, StoreError, open_store
from hermes_gateway._core.store.postgres import SCHEMA_VERSION, PostgresStore
from hermes_gateway.testing import ReferencePlatform
from scripted_upstream import ScriptedUpstream, text_stream
from store_helpers import assistant, user

CHAT = ConversationKey("telegram", "42")
PASSWORD = "pg-Secret-9f8e7d6c"


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text, text
    assert PASSWORD not in text, text
    return text


def rows(url: str, statement: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(statement).fetchall()


# -- the schema --------------------------------------------------------------------------------------------------

async def test_replicas_starting_together_on_an_empty_database_create_the_schema_once(postgres_url):
    stores = [PostgresStore(postgres_url) for _ in range(8)]
    try:
        await asyncio.gather(*(s.open() for s in stores))  # each would race to CREATE the tables without the lock
        assert rows(postgres_url, "SELECT version FROM hermes_schema_version") == [(SCHEMA_VERSION,)]
        tables = rows(postgres_url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'hermes_%' ORDER BY 1")
        assert [t for (t,) in tables] == ["hermes_approved_users", "hermes_chat_settings", "hermes_conversations",
                                          "hermes_messages", "hermes_pairing_codes", "hermes_platform_values",
                                          "hermes_reminders",
                                          "hermes_replies_in_flight", "hermes_responses", "hermes_room_context",
                                          "hermes_schedule_runs",
                                          "hermes_schema_version", "hermes_updates", "hermes_usage"]
        await stores[0].record_turn(CHAT, [user("hi"), assistant("hello")])
        assert [m["content"] for m in await stores[-1].history(CHAT)] == ["hi", "hello"]
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    again = PostgresStore(postgres_url)  # a later start finds it made and changes nothing
    await again.open()
    await again.close()
    assert rows(postgres_url, "SELECT version FROM hermes_schema_version") == [(SCHEMA_VERSION,)]


async def test_a_database_from_a_newer_version_is_refused_untouched(postgres_url):
    store = PostgresStore(postgres_url)
    await store.record_turn(CHAT, [user("kept")])
    await store.close()
    rows(postgres_url, "UPDATE hermes_schema_version SET version = 99 RETURNING version")
    with pytest.raises(StoreError) as caught:
        await PostgresStore(postgres_url).history(CHAT)
    assert "newer hermes-gateway" in one_line(caught.value)
    assert rows(postgres_url, "SELECT message FROM hermes_messages") == [('{"role":"user","content":"kept"}',)]


# -- two replicas on one database ---------------------------------------------------------------------------------

async def test_two_replicas_see_each_others_turns_and_new_at_once(postgres_url):
    a, b = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        await a.record_turn(CHAT, [user("my name is Ada"), assistant("hi Ada")])
        assert [m["content"] for m in await b.history(CHAT)] == ["my name is Ada", "hi Ada"]
        await b.record_turn(CHAT, [user("who am I?"), assistant("Ada")])
        assert [m["content"] for m in await a.history(CHAT)] == ["my name is Ada", "hi Ada", "who am I?", "Ada"]
        assert (await a.current(CHAT)).turns == 2
        await a.new_conversation(CHAT)
        assert await b.history(CHAT) == [] and await b.current(CHAT) is None
        await b.record_turn(CHAT, [user("fresh"), assistant("start")])
        assert [m["content"] for m in await a.history(CHAT)] == ["fresh", "start"]
        assert [c.first_text for c in await a.list_conversations()] == ["fresh", "my name is Ada"]
        assert await b.has_conversation(CHAT)
    finally:
        await a.close()
        await b.close()


async def test_concurrent_turns_from_two_replicas_on_one_chat_lose_nothing(postgres_url):
    a, b = PostgresStore(postgres_url, pool_size=4), PostgresStore(postgres_url, pool_size=4)

    async def chat(store, name):
        for n in range(15):
            await store.record_turn(CHAT, [user(f"{name}.{n}"), assistant(f"re {name}.{n}")])

    try:
        await asyncio.gather(*(chat(store, f"{store_name}{task}") for store_name, store in (("a", a), ("b", b))
                               for task in range(3)))
        current = await a.current(CHAT)
        assert current.turns == 90 and current.messages == 180
        everything = await b.conversation(current.id)
        assert all(everything[i + 1]["content"] == "re " + everything[i]["content"] for i in range(0, 180, 2))
        order: dict[str, list[int]] = {}
        for message in everything[::2]:
            name, n = message["content"].split(".")
            order.setdefault(name, []).append(int(n))
        assert order == {name: list(range(15)) for name in ("a0", "a1", "a2", "b0", "b1", "b2")}
    finally:
        await a.close()
        await b.close()


async def test_new_racing_turns_on_another_replica_puts_each_turn_whole_in_one_conversation(postgres_url):
    a, b = PostgresStore(postgres_url), PostgresStore(postgres_url)

    async def turns():
        for n in range(30):
            await a.record_turn(CHAT, [user(f"q{n}"), assistant(f"a{n}")])

    async def news():
        for _ in range(10):
            await b.new_conversation(CHAT)
            await asyncio.sleep(0.005)

    try:
        await asyncio.gather(turns(), news())
        seen: list[str] = []
        for summary in await b.list_conversations(limit=100):
            messages = await b.conversation(summary.id)
            assert len(messages) == summary.messages == 2 * summary.turns
            assert all(messages[i + 1]["content"] == "a" + messages[i]["content"][1:] for i in range(0, len(messages), 2))
            seen += [m["content"] for m in messages[::2]]
        assert sorted(seen, key=lambda q: int(q[1:])) == [f"q{n}" for n in range(30)]
        assert sum(1 for c in await a.list_conversations(limit=100) if c.current) <= 1
    finally:
        await a.close()
        await b.close()


# -- a database that is not there ---------------------------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_unreachable_database_at_start_is_one_line_naming_where_without_the_password(caplog):
    port = free_port()
    store = PostgresStore(f"postgresql://hermes:{PASSWORD}@127.0.0.1:{port}/hermes", connect_timeout=2)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(StoreError) as caught:
            await store.open()
        with pytest.raises(StoreError):
            await store.record_turn(CHAT, [user("hi")])
    text = one_line(caught.value)
    assert text.startswith(f"PostgreSQL at 127.0.0.1:{port}/hermes: cannot connect") and "refused" in text.lower()
    assert PASSWORD not in caplog.text
    await store.close()


@pytest.fixture
def own_server():
    """A server of the test's own, which the test may stop and start (the session's one stays up)."""
    from hermes_gateway.testing.postgres import start_or_skip

    server = start_or_skip()
    server.create_database("hermes")
    yield server
    server.cleanup()


async def test_a_database_that_goes_away_fails_each_operation_in_one_line_then_comes_back(own_server, caplog):
    url = own_server.url("hermes", password=PASSWORD)  # trust auth: the password is accepted and ignored
    store = PostgresStore(url, connect_timeout=2, statement_timeout=5)
    try:
        await store.record_turn(CHAT, [user("before"), assistant("kept")])
        own_server.stop()
        with caplog.at_level(logging.DEBUG):
            for operation in (store.history(CHAT), store.record_turn(CHAT, [user("during")]), store.list_conversations()):
                started = time.monotonic()
                with pytest.raises(StoreError) as caught:
                    await operation
                assert time.monotonic() - started < store.operation_timeout + 1  # bounded, never forever
                assert one_line(caught.value).startswith(f"PostgreSQL at 127.0.0.1:{own_server.port}/hermes: ")
        assert PASSWORD not in caplog.text
        assert "error connecting in" not in caplog.text  # the pool's own retry chatter is left out
        own_server.restart()
        assert [m["content"] for m in await store.history(CHAT)] == ["before", "kept"]  # nothing lost, none half
        await store.record_turn(CHAT, [user("after"), assistant("fine")])
        assert (await store.current(CHAT)).turns == 2
    finally:
        await store.close()


async def test_a_pool_busy_longer_than_its_wait_is_waited_for_not_taken_for_an_outage(postgres_url, caplog):
    # every connection out with an operation for longer than the pool's wait (connect_timeout): a burst on a
    # loaded machine. The operations queued behind them used to fail ("no free connection within 5 s"), the pool
    # was replaced and the caller saw a database outage; the database answered all along.
    store = PostgresStore(postgres_url, pool_size=2, connect_timeout=0.3, statement_timeout=5)
    try:
        await store.record_turn(CHAT, [user("kept"), assistant("here")])
        pool = store._pool

        async def slow(conn, seconds):
            await conn.execute("SELECT pg_sleep(%s)", (seconds,))
            return seconds

        with caplog.at_level(logging.WARNING):
            busy = [asyncio.ensure_future(store._run(slow, 1.0)) for _ in range(2)]
            await asyncio.sleep(0.1)  # both connections out
            history = await store.history(CHAT)  # waits ~0.9 s for one of them, three times the pool's wait
            assert await asyncio.gather(*busy) == [1.0, 1.0]
        assert [m["content"] for m in history] == ["kept", "here"]
        assert store._pool is pool and not store._failing, "a busy pool was replaced as if the database had gone"
        assert "unavailable" not in caplog.text
    finally:
        await store.close()


REF_BUDGET = {"default": RateBudget(rate=50, burst=10)}


def gateway_on(ref: ReferencePlatform, upstream_url: str, store_url: str) -> Gateway:
    config = parse_config({
        "model": {"base_url": upstream_url, "name": "test-model"},
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        "api_server": {"enabled": False},
        "store": {"url": store_url},
    }, env={})
    gateway = Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[ref]))
    gateway.store = PostgresStore(store_url, connect_timeout=1, statement_timeout=5)  # (the config's, faster to fail)
    return gateway


async def test_a_reply_is_still_delivered_when_the_database_goes_away_mid_run(own_server, caplog):
    ref = ReferencePlatform("reference", budgets=REF_BUDGET)
    url = own_server.url("hermes")
    async with ScriptedUpstream() as upstream:
        for text in ("Nice to meet you, Ada.", "Still here.", "Also still here.", "Your name is Ada."):
            upstream.add(*text_stream(text))
        async with gateway_on(ref, upstream.url, url) as gateway:
            await gateway.receive(Incoming("reference", "9", "Hi, I am Ada.", update_id="1"))
            own_server.stop()
            with caplog.at_level(logging.WARNING, logger="hermes_gateway"):
                await gateway.receive(Incoming("reference", "9", "Are you there?", update_id="2"))
                await gateway.receive(Incoming("reference", "9", "And now?", update_id="3"))
            own_server.restart()
            await gateway.receive(Incoming("reference", "9", "What is my name?", update_id="4"))
    assert ref.chat("9").screen == ["Nice to meet you, Ada.", "Still here.", "Also still here.", "Your name is Ada."]
    lines = [r for r in caplog.records if r.name.startswith("hermes_gateway")]
    # history, the turn and the update ids, for two messages: one line for all six failures
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert lines[0].getMessage().startswith("conversation store unavailable, ")
    reason = lines[0].getMessage().split(f"PostgreSQL at 127.0.0.1:{own_server.port}/hermes: ", 1)[1]
    assert reason in ("cannot connect: Connection refused",  # libpq's words: a new connection, or one it had
                      "the connection failed: terminating connection due to administrator command"), reason
    # while the database was away the turns were answered without history and not kept; the rest was kept
    assert [m["content"] for m in upstream.requests[1].body["messages"] if m["role"] != "system"] == ["Are you there?"]
    last = [(m["role"], m["content"]) for m in upstream.requests[3].body["messages"] if m["role"] != "system"]
    assert last == [("user", "Hi, I am Ada."), ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]


async def test_two_gateways_on_one_database_carry_one_conversation(postgres_url):
    """Two replicas behind one bot: the second one's turn carries what the first one said."""
    ref = ReferencePlatform("reference", budgets=REF_BUDGET)
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("Nice to meet you, Ada."))
        upstream.add(*text_stream("Your name is Ada."))
        upstream.add(*text_stream("Fresh start."))
        async with gateway_on(ref, upstream.url, postgres_url) as one, gateway_on(ref, upstream.url, postgres_url) as two:
            await one.receive(Incoming("reference", "9", "Hi, I am Ada.", update_id="1"))
            await two.receive(Incoming("reference", "9", "What is my name?", update_id="2"))
            await one.receive(Incoming("reference", "9", "/new", update_id="3"))
            await two.receive(Incoming("reference", "9", "Who am I?", update_id="4"))
    assert ref.chat("9").screen == ["Nice to meet you, Ada.", "Your name is Ada.",
                                    "✨ New conversation. What shall we talk about?", "Fresh start."]
    second = [(m["role"], m["content"]) for m in upstream.requests[1].body["messages"] if m["role"] != "system"]
    assert second == [("user", "Hi, I am Ada."), ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]
    third = [(m["role"], m["content"]) for m in upstream.requests[2].body["messages"] if m["role"] != "system"]
    assert third == [("user", "Who am I?")]


def test_open_store_picks_postgres_for_both_url_spellings():
    for url in ("postgresql://hermes@db/hermes", "postgres://hermes@db:6543/hermes?sslmode=require"):
        store = open_store(parse_config({"store": {"url": url, "history_messages": 6}}, env={}))
        assert isinstance(store, PostgresStore) and store.url == url and store.history_messages == 6
    assert open_store(parse_config({"store": {"url": "postgres://hermes@db:6543/hermes"}}, env={})).location == \
        "PostgreSQL at db:6543/hermes"
