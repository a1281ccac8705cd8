"""``forget`` and ``export`` against a real SQLite file and a real PostgreSQL: no row, no file of the person is
left (every table of the schema is searched, so a table added later cannot be forgotten), and an export is the
stored history exactly, tool calls and media references included."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from hermes_gateway._core.cli.main import main
from hermes_gateway._core.store import ConversationKey, SQLiteStore
from hermes_gateway._core.store.base import ReplyInFlight
from hermes_gateway._core.store.operator_records import Pairing, UsageRecord
from hermes_gateway._core.store.room_context import RoomMessage
from hermes_gateway._core.store.postgres import PostgresStore
from store_helpers import assistant, tool_turn, user

PERSON = "7340012345"               # the person's Telegram id, and their private chat's id
GROUP = "-1009876543"               # a group they share with someone else
OTHER = "8880001111"                # someone else, whose data must stay
MARK = "PERSON-MARK-91"             # in every text the person wrote
NOW = 1_800_000_000.0


def _image_turn(path: str, text: str) -> list[dict]:
    """A turn whose user message is an image, stored as history keeps it: a stand-in naming the stored file."""
    return [{"role": "user", "content": [{"type": "text", "text": f"[image] {text}",
                                          "hermes_file": {"path": path, "kind": "image"}}]},
            assistant("a cat, by the look of it")]


async def _seed(store, media) -> None:
    mine, theirs = media / "0123456789abcdef-cat.jpg", media / "fedcba9876543210-dog.jpg"
    mine.write_bytes(b"\xff\xd8 person's photo")
    theirs.write_bytes(b"\xff\xd8 other's photo")
    private, group, other = (ConversationKey("telegram", c) for c in (PERSON, GROUP, OTHER))
    await store.record_turn(private, tool_turn(f"{MARK} what time is it", "call_1", "12:00", "noon"))
    await store.new_conversation(private)  # an older conversation set aside by /new: also theirs
    await store.record_turn(private, _image_turn(str(mine), f"{MARK} look"))
    await store.record_turn(group, [user("group hello"), assistant("hello group")])
    await store.record_turn(other, _image_turn(str(theirs), "their dog"))
    for key, who in ((private, PERSON), (group, PERSON), (group, OTHER), (other, OTHER)):
        await store.record_usage(UsageRecord(NOW, "telegram", key.chat_id, None, who, "m", 10, 5))
        await store.set_chat_setting(key, "persona", "pirate") if key != group else None
        await store.add_reminder("telegram", key.chat_id, None, f"{MARK if who == PERSON else 'x'} call mum",
                                 NOW + 60, None, NOW, 10) if key != group else None
    await store.approve_user("telegram", PERSON, "admin", NOW)
    await store.approve_user("telegram", OTHER, "admin", NOW)
    await store.add_pairing(Pairing("ABCD1234", "telegram", PERSON, PERSON, NOW, NOW + 3600))
    await store.begin_reply(ReplyInFlight("r1", "telegram", PERSON, None, "private", "9", f"{MARK} hi", "me",
                                          started=NOW))
    await store.remember_updates([("telegram", "1001")])
    for who in (PERSON, OTHER):  # what each said in the group, kept as its context (issue 38)
        await store.keep_room_message(("telegram", GROUP, ""), RoomMessage(who, f"name-{who}", f"{MARK} ship it"
                                      if who == PERSON else "ship it", (), NOW), 20, 4000)


def _rows_sqlite(path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%'")]
        return {t: list(db.execute(f'SELECT * FROM "{t}"')) for t in tables}
    finally:
        db.close()


def _rows_postgres(url) -> dict[str, list[tuple]]:
    import psycopg

    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'public'")]
        return {t: list(conn.execute(f'SELECT * FROM "{t}"')) for t in tables}


def _traces(rows: dict[str, list[tuple]], *needles: str) -> list[tuple[str, tuple]]:
    """Every row of every table with a value that is one of the ids, or a text that holds the mark."""
    found = []
    for table, table_rows in rows.items():
        for row in table_rows:
            for value in row:
                text = str(value)
                if text in needles or MARK in text:
                    found.append((table, row))
                    break
    return found


def _person_rows(rows: dict[str, list[tuple]]) -> set[tuple[str, tuple]]:
    """The person's rows: those naming them (or their words), and the messages of their conversations."""
    traced = set(_traces(rows, PERSON))
    conversations = {row[0] for table, row in traced if table.endswith("conversations")}
    traced |= {(t, row) for t, table_rows in rows.items() if t.endswith("messages") for row in table_rows
               if row[0] in conversations}
    return traced


def _all(rows: dict[str, list[tuple]]) -> set[tuple[str, tuple]]:
    return {(table, row) for table, table_rows in rows.items() for row in table_rows}


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    """(config file, a function reading every table's rows, a store to seed) for the backend under test."""
    media = tmp_path / "media"
    media.mkdir()
    if request.param == "sqlite":
        path = tmp_path / "state.db"
        url, rows, store = f"sqlite:///{path}", lambda: _rows_sqlite(path), SQLiteStore(path)
    else:
        url = request.getfixturevalue("postgres_url")
        rows, store = (lambda: _rows_postgres(url)), PostgresStore(url)
    config = tmp_path / "config.yaml"
    config.write_text(f"store:\n  url: {url}\nmedia:\n  directory: {media}\n", encoding="utf-8")
    return config, rows, store, media


def _seeded(store, media) -> None:
    async def seed() -> None:
        try:
            await _seed(store, media)
        finally:
            await store.close()
    asyncio.run(seed())


def test_forget_leaves_no_row_and_no_file_of_the_person(backend, capsys):
    config, rows, store, media = backend
    _seeded(store, media)
    before = rows()
    assert _traces(before, PERSON)  # the search finds them before (so it could find them after)
    assert main(["forget", "--user", f"telegram:{PERSON}", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert _traces(rows(), PERSON) == []
    assert not (media / "0123456789abcdef-cat.jpg").exists()
    # what it says it deleted, per kind
    assert f"forgot telegram:{PERSON}:" in out
    for line in ("2 conversations", "6 messages", "1 replies in flight", "1 chat settings", "1 reminders",
                 "2 usage records", "1 approvals", "1 pairing codes", "1 media files"):
        assert f"  {line}\n" in out, out
    assert f"kept: the conversations of chat telegram:{GROUP}" in out
    # everyone else's is all there
    after = rows()
    assert (media / "fedcba9876543210-dog.jpg").exists()
    assert _all(after) == _all(before) - _person_rows(before)
    assert _traces(after, OTHER) and _traces(after, GROUP)
    conversations = {row[0] for t, table_rows in after.items() if t.endswith("conversations") for row in table_rows}
    assert all(row[0] in conversations for t, table_rows in after.items() if t.endswith("messages")
               for row in table_rows)


def test_forget_twice_deletes_nothing_the_second_time(backend, capsys):
    config, rows, store, media = backend
    _seeded(store, media)
    assert main(["forget", "--user", f"telegram:{PERSON}", "--config", str(config)]) == 0
    capsys.readouterr()
    assert main(["forget", "--user", f"telegram:{PERSON}", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert all(line.startswith("  0 ") for line in out.splitlines()[1:] if not line.startswith("  kept")), out


def test_export_round_trips_a_conversation_with_tools_and_media(backend, capsys):
    config, rows, store, media = backend
    _seeded(store, media)

    async def stored() -> dict[int, list[dict]]:
        try:
            found = {}
            for c in await store.list_conversations(100):
                if c.chat_id == PERSON:
                    found[c.id] = await store.conversation(c.id)
            return found
        finally:
            await store.close()
    expected = asyncio.run(stored())
    assert main(["export", "--user", f"telegram:{PERSON}", "--config", str(config)]) == 0
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    exported: dict[int, list[dict]] = {}
    for record in records:
        assert record["platform"] == "telegram" and record["chat_id"] == PERSON
        exported.setdefault(record["conversation"], []).append(record["message"])
    assert exported == expected and len(expected) == 2
    assert any(m.get("tool_calls") for ms in exported.values() for m in ms)
    media_refs = [ref for r in records for ref in r["media"]]
    assert media_refs == [{"path": str(media / "0123456789abcdef-cat.jpg"), "kind": "image", "exists": True}]
    assert f"not exported: chat telegram:{GROUP} is shared" in captured.err
    # one conversation by id, as markdown
    first = min(expected)
    assert main(["export", "--chat", str(first), "--format", "markdown", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert f"{MARK} what time is it" in text and "```tool-call clock" in text and "noon" in text


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store(request, tmp_path):
    from hermes_gateway._core.store import MemoryStore

    if request.param == "memory":
        return MemoryStore()
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "state.db")
    return PostgresStore(request.getfixturevalue("postgres_url"))


async def test_every_backend_forgets_the_same_things(any_store, tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    try:
        await _seed(any_store, media)
        forgotten = await any_store.forget_person("telegram", PERSON)
        assert forgotten.counts == {"messages": 6, "conversations": 2, "replies in flight": 1, "chat settings": 1,
                                    "reminders": 1, "usage records": 2, "approvals": 1, "pairing codes": 1,
                                    "room context": 1}
        assert forgotten.media == (str(media / "0123456789abcdef-cat.jpg"),)
        assert forgotten.shared_chats == (GROUP,)
        # what is left: the other person's and the group's, untouched; nothing of the person
        assert await any_store.history(ConversationKey("telegram", PERSON)) == []
        assert await any_store.history(ConversationKey("telegram", GROUP)) != []
        assert await any_store.history(ConversationKey("telegram", OTHER)) != []
        assert not await any_store.is_approved("telegram", PERSON) and await any_store.is_approved("telegram", OTHER)
        assert [u.user_id for u in await any_store.usage()] == [OTHER, OTHER]
        assert await any_store.replies_in_flight() == []
        assert await any_store.reminders(ConversationKey("telegram", PERSON)) == []
        assert len(await any_store.reminders(ConversationKey("telegram", OTHER))) == 1
        assert [m.sender_id for m in await any_store.room_context(("telegram", GROUP, ""), 20, 4000)] == [OTHER]
    finally:
        await any_store.close()


def test_forget_deletes_no_file_outside_the_media_directory(tmp_path, capsys):
    """A stored reference is not trusted to name a file to delete: only files inside the media directory go."""
    media, outside = tmp_path / "media", tmp_path / "precious.txt"
    media.mkdir()
    outside.write_text("not the gateway's\n")
    store = SQLiteStore(tmp_path / "state.db")

    async def seed() -> None:
        try:
            await store.record_turn(ConversationKey("telegram", PERSON), _image_turn(str(outside), "look"))
            await store.record_turn(ConversationKey("telegram", PERSON), _image_turn(f"{media}/../precious.txt", "x"))
        finally:
            await store.close()
    asyncio.run(seed())
    config = tmp_path / "config.yaml"
    config.write_text(f"store:\n  path: {tmp_path / 'state.db'}\nmedia:\n  directory: {media}\n", encoding="utf-8")
    assert main(["forget", "--user", f"telegram:{PERSON}", "--config", str(config)]) == 0
    assert "  0 media files\n" in capsys.readouterr().out
    assert outside.read_text() == "not the gateway's\n"
