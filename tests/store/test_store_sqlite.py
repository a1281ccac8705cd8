"""What only the SQLite store can get wrong: restarts, the file on disk, locks, corruption, WAL."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from hermes_gateway._core.store import ConversationKey, SQLiteStore, StoredResponse, StoreError
from store_helpers import assistant, tool_turn, user

CHAT = ConversationKey("telegram", "42", "7")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_naming(error: StoreError, path: Path) -> str:
    text = str(error)
    assert "\n" not in text and str(path) in text, text
    return text


async def test_a_restart_keeps_conversations_current_chats_and_responses(tmp_path):
    path = tmp_path / "deep" / "dir" / "state.db"  # parent directories are created
    store = SQLiteStore(path)
    await store.record_turn(CHAT, [user("my name is Ada"), assistant("hi Ada")])
    await store.new_conversation(CHAT)
    await store.record_turn(CHAT, tool_turn("time?", "c1", "12:00", "noon"))
    await store.put_response("resp_1", StoredResponse({"id": "resp_1"}, (user("q"), assistant("a")), "k"))
    await store.close()

    again = SQLiteStore(path)
    try:
        assert [m.get("content") for m in await again.history(CHAT)] == ["time?", None, "12:00", "noon"]
        listed = await again.list_conversations()
        assert [(c.first_text, c.current, c.thread_id) for c in listed] == [("time?", True, "7"),
                                                                            ("my name is Ada", False, "7")]
        assert (await again.get_response("resp_1", "k")).conversation[1] == assistant("a")
        await again.record_turn(CHAT, [user("more"), assistant("ok")])
        assert (await again.current(CHAT)).turns == 2
    finally:
        await again.close()


async def test_the_database_is_in_wal_mode_with_a_schema_version(tmp_path):
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()
    assert await store.journal_mode() == "wal"
    await store.close()
    with sqlite3.connect(tmp_path / "state.db") as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    again = SQLiteStore(tmp_path / "state.db")  # opening again creates nothing twice
    await again.open()
    await again.close()
    with sqlite3.connect(tmp_path / "state.db") as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(1,)]


async def test_a_database_from_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "state.db"
    store = SQLiteStore(path)
    await store.open()
    await store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError) as caught:
        await SQLiteStore(path).open()
    assert "newer hermes-gateway" in one_line_naming(caught.value, path)


async def test_a_file_that_is_not_a_database_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "state.db"
    path.write_text("these are my notes, not a database\n" * 200)
    before = digest(path)
    store = SQLiteStore(path)
    with pytest.raises(StoreError) as caught:
        await store.history(CHAT)
    assert "not an SQLite database" in one_line_naming(caught.value, path)
    with pytest.raises(StoreError):
        await store.record_turn(CHAT, [user("hi")])
    await store.close()
    assert digest(path) == before


async def test_a_corrupt_database_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "state.db"
    store = SQLiteStore(path)
    for n in range(200):
        await store.record_turn(CHAT, [user(f"question {n} " + "x" * 200), assistant("answer " + "y" * 200)])
    await store.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 20 * 4096
    data[4096 * 2:4096 * 12] = b"\xde\xad\xbe\xef" * (4096 * 10 // 4)  # pages 3..12: garbage
    path.write_bytes(bytes(data))
    before = digest(path)
    store = SQLiteStore(path)
    with pytest.raises(StoreError) as caught:
        await store.list_conversations()
        await store.history(CHAT)
    assert "corrupt" in one_line_naming(caught.value, path)
    await store.close()
    assert digest(path) == before


async def test_a_directory_where_the_file_should_be_is_one_line(tmp_path):
    path = tmp_path / "state.db"
    path.mkdir()
    with pytest.raises(StoreError) as caught:
        await SQLiteStore(path).history(CHAT)
    assert "directory" in one_line_naming(caught.value, path)


async def test_a_parent_that_is_a_file_is_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    path = tmp_path / "notes.txt" / "state.db"
    with pytest.raises(StoreError) as caught:
        await SQLiteStore(path).history(CHAT)
    assert "cannot create its directory" in one_line_naming(caught.value, path)


async def test_a_write_while_another_program_holds_the_lock_fails_cleanly_and_loses_nothing(tmp_path):
    path = tmp_path / "state.db"
    store = SQLiteStore(path, busy_timeout=0.2)
    await store.record_turn(CHAT, [user("before"), assistant("kept")])
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program is writing and takes its time
    try:
        with pytest.raises(StoreError) as caught:
            await store.record_turn(CHAT, [user("during"), assistant("lost")])
        assert "locked" in one_line_naming(caught.value, path)
        assert [m["content"] for m in await store.history(CHAT)] == ["before", "kept"]  # WAL: reads go on
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.record_turn(CHAT, [user("after"), assistant("fine")])
    assert [m["content"] for m in await store.history(CHAT)] == ["before", "kept", "after", "fine"]
    await store.close()


async def test_a_database_locked_exclusively_cannot_even_be_opened_and_says_so(tmp_path):
    path = tmp_path / "state.db"
    other = sqlite3.connect(path, isolation_level=None)  # a rollback-journal database, locked whole
    other.execute("CREATE TABLE notes (x)")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("INSERT INTO notes VALUES (1)")
    try:
        with pytest.raises(StoreError) as caught:
            await SQLiteStore(path, busy_timeout=0.2).open()
        assert "locked" in one_line_naming(caught.value, path)
    finally:
        other.execute("ROLLBACK")
        other.close()


async def test_two_stores_on_one_file_write_at_once(tmp_path):
    """The gateway and ``hermes-gateway history`` (or two gateways by mistake) share a file safely."""
    path = tmp_path / "state.db"
    # a busy machine can hold one writer's lock for seconds; the point here is that nothing is lost
    a, b = SQLiteStore(path, busy_timeout=60), SQLiteStore(path, busy_timeout=60)

    async def chat(store, name):
        key = ConversationKey("cli", name)
        for n in range(25):
            await store.record_turn(key, [user(f"{name} {n}"), assistant("ok")])

    await asyncio.gather(chat(a, "a"), chat(b, "b"), chat(a, "c"), chat(b, "d"))
    listed = await a.list_conversations()
    assert sorted((c.chat_id, c.turns, c.messages) for c in listed) == [(x, 25, 50) for x in "abcd"]
    await a.close()
    await b.close()


async def test_a_cancelled_write_is_whole_or_absent_never_half(tmp_path):
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()
    task = asyncio.ensure_future(store.record_turn(CHAT, [user(f"m{n}") for n in range(500)]))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    listed = await store.list_conversations()  # queued after the write on the store's thread
    assert listed == [] or (listed[0].messages == 500 and len(await store.conversation(listed[0].id)) == 500)
    await store.close()


async def test_every_statement_runs_on_the_stores_own_thread_never_the_event_loops(tmp_path):
    import threading

    store = SQLiteStore(tmp_path / "state.db")
    threads: set[str] = set()
    await store._run(lambda db: db.set_trace_callback(lambda sql: threads.add(threading.current_thread().name)))
    await store.record_turn(CHAT, [user("hi"), assistant("hello")])
    await store.history(CHAT)
    await store.list_conversations()
    await store.put_response("r", StoredResponse({"id": "r"}, (), None))
    await store.get_response("r", None)
    await store.remember_updates([("telegram", "1")])
    await store.close()
    assert threads and all(name.startswith("hermes-store") for name in threads), threads
    assert threading.current_thread().name not in threads


async def test_the_database_and_its_wal_are_readable_by_their_owner_only(tmp_path):
    """Every conversation is in it: 0600 like chat_history, whatever the umask; the directory 0700."""
    import os
    import stat

    path = tmp_path / "home" / "state.db"
    old = os.umask(0o022)
    try:
        store = SQLiteStore(path)
        await store.record_turn(CHAT, [user("my secret plans"), assistant("noted")])
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}
        await store.close()
    finally:
        os.umask(old)
    assert modes["state.db"] == 0o600 and modes.get("state.db-wal", 0o600) == 0o600, modes
    assert all(mode == 0o600 for mode in modes.values()), modes
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
