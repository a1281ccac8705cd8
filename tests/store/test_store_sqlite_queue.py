"""The SQLite store's queue: writes that wait together share one COMMIT, and each keeps its own outcome."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from hermes_gateway._core.store import ConversationKey, SQLiteStore, StoreError
from store_helpers import assistant, user


async def held_thread(store: SQLiteStore) -> tuple[threading.Event, asyncio.Future]:
    """The store's thread kept busy until the event is set, so what the test queues next waits together."""
    release, started = threading.Event(), threading.Event()

    def hold(db: sqlite3.Connection) -> None:
        started.set()
        release.wait(30)
    holding = asyncio.ensure_future(store._run(hold))
    while not started.is_set():
        await asyncio.sleep(0.001)
    return release, holding


async def test_writes_queued_together_share_one_commit_and_all_are_kept(tmp_path):
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()
    statements: list[str] = []
    await store._run(lambda db: db.set_trace_callback(statements.append))
    release, holding = await held_thread(store)
    turns = [asyncio.ensure_future(store.record_turn(ConversationKey("telegram", str(n)),
                                                     [user(f"q{n}"), assistant(f"a{n}")])) for n in range(50)]
    await asyncio.sleep(0)  # every task has queued its write
    release.set()
    await asyncio.gather(holding, *turns)
    assert sum(1 for s in statements if s.strip().upper() == "COMMIT") == 1, "50 turns, one transaction"
    for n in range(50):
        assert [m["content"] for m in await store.history(ConversationKey("telegram", str(n)))] == [f"q{n}", f"a{n}"]
    await store.close()


async def test_a_bad_write_in_a_batch_fails_alone_and_leaves_nothing_half_written(tmp_path):
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()
    release, holding = await held_thread(store)
    good = [asyncio.ensure_future(store.record_turn(ConversationKey("telegram", str(n)), [user(f"q{n}")]))
            for n in range(3)]
    bad = asyncio.ensure_future(store.record_turn(ConversationKey("telegram", "bad"),
                                                  [user("stored?"), {"role": "user", "content": object()}]))
    more = [asyncio.ensure_future(store.record_turn(ConversationKey("telegram", str(n)), [user(f"q{n}")]))
            for n in range(3, 6)]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holding, *good, *more)
    with pytest.raises(StoreError, match="not JSON"):
        await bad
    assert await store.history(ConversationKey("telegram", "bad")) == [], "its first message was rolled back too"
    for n in range(6):
        assert [m["content"] for m in await store.history(ConversationKey("telegram", str(n)))] == [f"q{n}"]
    await store.close()


async def test_when_sqlite_ends_the_batch_itself_every_other_write_runs_again_alone(tmp_path):
    """A full disk or an I/O error rolls the whole transaction back: the writes before it must not be lost."""
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()

    def failing(db: sqlite3.Connection) -> None:
        db.execute("ROLLBACK")  # what SQLite does on SQLITE_FULL / SQLITE_IOERR
        raise sqlite3.OperationalError("disk I/O error")

    release, holding = await held_thread(store)
    before = asyncio.ensure_future(store.record_turn(ConversationKey("telegram", "before"), [user("kept")]))
    broken = asyncio.ensure_future(store._write(failing))
    after = asyncio.ensure_future(store.record_turn(ConversationKey("telegram", "after"), [user("kept too")]))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holding, before, after)
    with pytest.raises(StoreError, match="disk I/O error"):
        await broken
    assert [m["content"] for m in await store.history(ConversationKey("telegram", "before"))] == ["kept"]
    assert [m["content"] for m in await store.history(ConversationKey("telegram", "after"))] == ["kept too"]
    await store.close()


async def test_a_write_cancelled_before_its_turn_is_skipped(tmp_path):
    store = SQLiteStore(tmp_path / "state.db")
    await store.open()
    release, holding = await held_thread(store)
    skipped = asyncio.ensure_future(store.record_turn(ConversationKey("telegram", "gone"), [user("never")]))
    kept = asyncio.ensure_future(store.record_turn(ConversationKey("telegram", "here"), [user("yes")]))
    await asyncio.sleep(0)
    skipped.cancel()
    release.set()
    await asyncio.gather(holding, kept)
    assert await store.history(ConversationKey("telegram", "gone")) == []
    assert [m["content"] for m in await store.history(ConversationKey("telegram", "here"))] == ["yes"]
    await store.close()
