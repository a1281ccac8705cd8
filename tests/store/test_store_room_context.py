"""A group's room context (issue 38) on every backend: memory, SQLite and a real PostgreSQL.

Kept per chat and thread, bounded at every write by count and characters (the oldest go first), read back
oldest first, cleared by ``/forget``; a reopened store (a restart) still has it, and two replicas on one
database share it and trim it to the same bounds when they write at once.
"""

from __future__ import annotations

import asyncio


from hermes_gateway._core.store.postgres import PostgresStore
from hermes_gateway._core.store.room_context import RoomMessage

ROOM, THREAD, OTHER = ("telegram", "-1001", ""), ("telegram", "-1001", "7"), ("telegram", "-1002", "")




def said(text: str, sender: str = "Ada", at: float = 1.0, **kw) -> RoomMessage:
    return RoomMessage(sender_id=sender.lower(), sender=sender, text=text, files=kw.pop("files", ()), at=at, **kw)


async def test_kept_per_room_and_thread_bounded_by_count_and_read_back_after_a_reopen(make_store):
    store = make_store()
    try:
        for i in range(5):
            await store.keep_room_message(ROOM, said(f"m{i}", at=float(i)), 3, 1000)
        await store.keep_room_message(THREAD, said("in a topic", "Bob", files=("a.pdf", "b.png")), 3, 1000)
        await store.keep_room_message(OTHER, said("elsewhere", from_bot=True), 3, 1000)
    finally:
        await store.close()
    reopened = make_store()
    try:
        assert [m.text for m in await reopened.room_context(ROOM, 20, 1000)] == ["m2", "m3", "m4"]
        [topic] = await reopened.room_context(THREAD, 20, 1000)
        assert (topic.sender, topic.sender_id, topic.text, topic.files) == ("Bob", "bob", "in a topic",
                                                                             ("a.pdf", "b.png"))
        [other] = await reopened.room_context(OTHER, 20, 1000)
        assert other.from_bot and other.text == "elsewhere"
        assert [m.text for m in await reopened.room_context(ROOM, 2, 1000)] == ["m3", "m4"], "read within bounds"
        assert await reopened.forget_room(ROOM) == 3
        assert await reopened.room_context(ROOM, 20, 1000) == []
        assert len(await reopened.room_context(THREAD, 20, 1000)) == 1, "/forget clears one room only"
    finally:
        await reopened.close()


async def test_the_character_bound_drops_the_oldest_and_a_message_alone_over_it_is_not_kept(make_store):
    store = make_store()
    try:
        for text in ("a" * 40, "b" * 40, "c" * 40):  # each costs 3 (the sender) + 40
            await store.keep_room_message(ROOM, said(text), 20, 100)
        assert [m.text[0] for m in await store.room_context(ROOM, 20, 100)] == ["b", "c"]
        await store.keep_room_message(ROOM, said("z" * 200), 20, 100)
        assert await store.room_context(ROOM, 20, 100) == [], "a message over the bound leaves nothing older either"
    finally:
        await store.close()


async def test_two_replicas_keeping_messages_of_one_room_at_once_stay_within_its_bounds(make_store):
    stores = [make_store(), make_store()]
    try:
        await asyncio.gather(*(s.keep_room_message(ROOM, said(f"r{i}-{n}"), 4, 1000)
                               for n in range(5) for i, s in enumerate(stores)))
        assert len(await stores[0].room_context(ROOM, 100, 100_000)) == 4
    finally:
        for s in stores:
            await s.close()


async def test_a_postgres_database_made_before_the_room_context_gets_its_table_at_open(postgres_url):
    import psycopg

    store = PostgresStore(postgres_url)
    await store.open()
    await store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # as a version without issue 38 left it
        conn.execute("DROP TABLE hermes_room_context")
    again = PostgresStore(postgres_url)
    try:
        await again.keep_room_message(ROOM, said("after the upgrade"), 5, 1000)
        assert [m.text for m in await again.room_context(ROOM, 5, 1000)] == ["after the upgrade"]
    finally:
        await again.close()
