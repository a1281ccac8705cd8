"""The ConversationStore contract, run against every backend (memory, SQLite and a real PostgreSQL)."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway._core.store import ConversationKey, MemoryStore, SQLiteStore, StoredResponse, StoreError
from hermes_gateway._core.store.postgres import PostgresStore
from store_helpers import Clock, assistant, tool_turn, user

CHAT = ConversationKey("telegram", "42")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request, tmp_path):
    """``make_store(**limits)``: a fresh store of the backend under test (the test closes it).

    PostgreSQL: each test has a database of its own on the session's server (tests/store/conftest.py).
    """
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None

    def make(**options):
        options.setdefault("clock", Clock())
        if request.param == "memory":
            store = MemoryStore(**options)
        elif request.param == "postgres":
            store = PostgresStore(url, **options)
        else:
            store = SQLiteStore(tmp_path / "state.db", **options)
        return store

    return make


@pytest.fixture
async def store(make_store):
    s = make_store()
    yield s
    await s.close()


async def test_a_new_chat_has_no_history(store):
    assert await store.history(CHAT) == []
    assert await store.current(CHAT) is None
    assert await store.list_conversations() == []


async def test_turns_are_appended_in_order_with_tool_calls_and_results(store):
    await store.record_turn(CHAT, [user("hi"), assistant("hello")])
    await store.record_turn(CHAT, tool_turn("what time is it?", "call_1", "12:00", "It is noon."))
    history = await store.history(CHAT)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert history[3]["tool_calls"][0]["function"] == {"name": "clock", "arguments": "{\"tz\": \"UTC\"}"}
    assert history[4] == {"role": "tool", "tool_call_id": "call_1", "content": "12:00"}
    assert history[-1]["content"] == "It is noon."


async def test_chats_threads_and_platforms_are_separate(store):
    await store.record_turn(CHAT, [user("in the chat"), assistant("a")])
    await store.record_turn(ConversationKey("telegram", "42", "7"), [user("in topic 7"), assistant("b")])
    await store.record_turn(ConversationKey("discord", "42"), [user("on discord"), assistant("c")])
    assert (await store.history(CHAT))[0]["content"] == "in the chat"
    assert (await store.history(ConversationKey("telegram", "42", "7")))[0]["content"] == "in topic 7"
    assert (await store.history(ConversationKey("discord", "42")))[0]["content"] == "on discord"
    assert len(await store.list_conversations()) == 3


async def test_new_conversation_starts_fresh_and_keeps_the_old_one_listed(store):
    await store.record_turn(CHAT, [user("my name is Ada"), assistant("hi Ada")])
    await store.new_conversation(CHAT)
    assert await store.history(CHAT) == []
    assert await store.current(CHAT) is None
    await store.record_turn(CHAT, [user("who am I?"), assistant("no idea")])
    assert [m["content"] for m in await store.history(CHAT)] == ["who am I?", "no idea"]
    listed = await store.list_conversations()
    assert [c.first_text for c in listed] == ["who am I?", "my name is Ada"]
    assert [c.current for c in listed] == [True, False]
    old = await store.conversation(listed[1].id)
    assert [m["content"] for m in old] == ["my name is Ada", "hi Ada"]


async def test_new_conversation_twice_or_on_an_unknown_chat_creates_nothing(store):
    await store.new_conversation(CHAT)
    await store.new_conversation(CHAT)
    assert await store.list_conversations() == []


async def test_has_conversation_is_true_once_a_turn_was_recorded_for_that_exact_key_even_after_new(store):
    thread = ConversationKey("slack", "C1", "1700000000.000100")
    assert not await store.has_conversation(thread)
    await store.new_conversation(thread)
    assert not await store.has_conversation(thread), "/new on an unknown chat creates nothing"
    await store.record_turn(thread, [user("hi"), assistant("hello")])
    assert await store.has_conversation(thread)
    assert not await store.has_conversation(ConversationKey("slack", "C1"))
    assert not await store.has_conversation(ConversationKey("slack", "C1", "1700000000.000200"))
    assert not await store.has_conversation(ConversationKey("discord", "C1", "1700000000.000100"))
    await store.new_conversation(thread)
    assert await store.current(thread) is None
    assert await store.has_conversation(thread), "a conversation /new set aside still counts"
    await store.close()
    assert await store.has_conversation(thread), "and after closing (a restart)"


async def test_summaries_count_turns_and_messages_and_order_by_last_activity(make_store):
    clock = Clock(1000.0)
    store = make_store(clock=clock)
    try:
        await store.record_turn(CHAT, [user("first chat"), assistant("a")])
        clock.advance(60)
        await store.record_turn(ConversationKey("cli", "local"), [user("second chat"), assistant("b")])
        clock.advance(60)
        await store.record_turn(CHAT, tool_turn("again", "c1", "r", "done"))
        listed = await store.list_conversations()
        assert [(c.platform, c.chat_id, c.turns, c.messages) for c in listed] == [
            ("telegram", "42", 2, 6), ("cli", "local", 1, 2)]
        assert listed[0].created == 1000.0 and listed[0].last_activity == 1120.0
        assert listed[0].first_text == "first chat" and listed[0].thread_id is None
        current = await store.current(CHAT)
        assert current is not None and current.id == listed[0].id and current.turns == 2
        assert await store.summary(listed[1].id) == listed[1] and await store.summary(999) is None
        assert [c.chat_id for c in await store.list_conversations(limit=1)] == ["42"]
        assert [c.chat_id for c in await store.list_conversations(limit=1, offset=1)] == ["local"]  # page 2
        assert await store.list_conversations(limit=1, offset=2) == []
    finally:
        await store.close()


async def test_an_unknown_conversation_id_is_none(store):
    assert await store.conversation(999) is None


async def test_history_keeps_the_most_recent_messages_and_starts_at_a_user_message(make_store):
    store = make_store(history_messages=5, history_chars=10_000)
    try:
        for n in range(3):
            await store.record_turn(CHAT, tool_turn(f"q{n}", f"call{n}", f"r{n}", f"a{n}"))
        history = await store.history(CHAT)
        # 5 newest would start with q1's tool result: the cut moves on to the next user message.
        assert [m.get("content") for m in history] == ["q2", None, "r2", "a2"]
        everything = await store.conversation((await store.current(CHAT)).id)
        assert len(everything) == 12  # the bound applies to what the model gets, not to what is kept
    finally:
        await store.close()


async def test_history_is_bounded_by_characters_too(make_store):
    store = make_store(history_messages=100, history_chars=250)
    try:
        for n in range(5):
            await store.record_turn(CHAT, [user(f"{n}" * 50), assistant(f"{n}" * 50)])
        history = await store.history(CHAT)
        assert [m["content"][0] for m in history] == ["3", "3", "4", "4"]  # 200 characters, 300 would not fit
        assert sum(len(m["content"]) for m in history) <= 250
    finally:
        await store.close()


async def test_a_newest_turn_larger_than_the_budget_gives_no_history_rather_than_a_fragment(make_store):
    store = make_store(history_messages=100, history_chars=100)
    try:
        await store.record_turn(CHAT, tool_turn("q", "c", "x" * 500, "done"))
        assert await store.history(CHAT) == []
    finally:
        await store.close()


async def test_a_stored_message_cannot_be_changed_through_the_callers_dict(store):
    message = user("original")
    await store.record_turn(CHAT, [message, assistant("ok")])
    message["content"] = "changed"
    assert (await store.history(CHAT))[0]["content"] == "original"


async def test_a_message_that_is_not_json_is_refused_and_nothing_of_the_turn_is_kept(store):
    await store.record_turn(CHAT, [user("kept"), assistant("yes")])
    with pytest.raises(StoreError, match="not JSON"):
        await store.record_turn(CHAT, [user("lost"), {"role": "assistant", "content": object()}])
    assert [m["content"] for m in await store.history(CHAT)] == ["kept", "yes"]
    assert (await store.current(CHAT)).turns == 1


async def test_an_empty_turn_records_nothing(store):
    await store.record_turn(CHAT, [])
    assert await store.list_conversations() == []


async def test_many_tasks_writing_at_once_lose_nothing(store):
    keys = [ConversationKey("telegram", str(n)) for n in range(5)]

    async def chat(key, n):
        for turn in range(4):
            await store.record_turn(key, [user(f"{n}.{turn}"), assistant(f"re {n}.{turn}")])

    await asyncio.gather(*(chat(keys[n % 5], n) for n in range(20)))
    listed = await store.list_conversations()
    assert len(listed) == 5 and all(c.turns == 16 and c.messages == 32 for c in listed)
    for key in keys:
        everything = await store.conversation((await store.current(key)).id)
        # every turn is whole and in order: each user message is followed by its own reply
        assert all(everything[i + 1]["content"] == "re " + everything[i]["content"] for i in range(0, 32, 2))
        by_task: dict[str, list[int]] = {}
        for m in everything[::2]:
            n, turn = m["content"].split(".")
            by_task.setdefault(n, []).append(int(turn))
        assert all(turns == [0, 1, 2, 3] for turns in by_task.values())


async def test_closing_keeps_everything_and_the_store_can_be_used_again(store):
    """How a restarted gateway (or a test's restart) reuses the store it was handed."""
    await store.record_turn(CHAT, [user("before the restart"), assistant("ok")])
    await store.put_response("resp_1", response(1))
    await store.remember_updates([("telegram", "1001")])
    await store.close()
    await store.close()  # twice is fine
    assert [m["content"] for m in await store.history(CHAT)] == ["before the restart", "ok"]
    assert await store.get_response("resp_1", "key-a") == response(1)
    assert await store.recent_updates(10) == [("telegram", "1001")]
    await store.record_turn(CHAT, [user("after"), assistant("fine")])
    assert (await store.current(CHAT)).turns == 2


async def test_use_while_closing_is_safe(store):
    await store.record_turn(CHAT, [user("one"), assistant("1")])
    await asyncio.gather(store.close(), store.record_turn(CHAT, [user("two"), assistant("2")]), store.close(),
                         store.record_turn(CHAT, [user("three"), assistant("3")]))
    contents = [m["content"] for m in await store.history(CHAT)]
    turns = sorted(zip(contents[::2], contents[1::2]))  # concurrent turns: each whole, in either order
    assert contents[:2] == ["one", "1"] and turns == [("one", "1"), ("three", "3"), ("two", "2")]
    await store.close()


# -- inbound update ids ------------------------------------------------------------------------------------------

async def test_update_ids_come_back_oldest_first_newest_kept(make_store):
    store = make_store(max_updates=5)
    try:
        assert await store.recent_updates(10) == []
        await store.remember_updates([("telegram", str(n)) for n in range(4)])
        await store.remember_updates([("slack", "a"), ("slack", "b"), ("telegram", 7)])
        assert await store.recent_updates(10) == [("telegram", "2"), ("telegram", "3"), ("slack", "a"),
                                                  ("slack", "b"), ("telegram", "7")]
        assert await store.recent_updates(2) == [("slack", "b"), ("telegram", "7")]
        await store.remember_updates([])
        assert len(await store.recent_updates(10)) == 5
    finally:
        await store.close()


# -- stored API responses ----------------------------------------------------------------------------------------

def response(n: int, size: int = 0) -> StoredResponse:
    return StoredResponse({"id": f"resp_{n}", "output_text": "x" * size},
                          (user(f"q{n}"), assistant(f"a{n}")), owner="key-a")


async def test_a_stored_response_comes_back_whole_for_its_owner_only(store):
    await store.put_response("resp_1", response(1))
    found = await store.get_response("resp_1", "key-a")
    assert found == response(1)
    assert await store.get_response("resp_1", "key-b") is None
    assert await store.get_response("resp_1", None) is None
    assert await store.get_response("resp_2", "key-a") is None
    assert not await store.delete_response("resp_1", "key-b")
    assert await store.delete_response("resp_1", "key-a")
    assert await store.get_response("resp_1", "key-a") is None
    assert not await store.delete_response("resp_1", "key-a")


async def test_responses_without_keys_belong_to_nobody_in_particular(store):
    await store.put_response("r", StoredResponse({"id": "r"}, (), owner=None))
    assert (await store.get_response("r", None)).response == {"id": "r"}
    assert await store.get_response("r", "key-a") is None


async def test_responses_are_bounded_by_bytes_oldest_first(make_store):
    store = make_store(response_bytes=3_000)
    try:
        for n in range(5):
            await store.put_response(f"resp_{n}", response(n, size=1000))
        kept = [n for n in range(5) if await store.get_response(f"resp_{n}", "key-a") is not None]
        assert kept == [3, 4]  # each is a little over 1,000 bytes: three would not fit in 3,000
    finally:
        await store.close()


async def test_responses_are_bounded_by_count_too(make_store):
    store = make_store(max_responses=2)
    try:
        for n in range(4):
            await store.put_response(f"resp_{n}", response(n))
        assert [n for n in range(4) if await store.get_response(f"resp_{n}", "key-a")] == [2, 3]
    finally:
        await store.close()


async def test_the_newest_response_is_kept_even_when_it_alone_is_over_the_budget(make_store):
    store = make_store(response_bytes=100)
    try:
        await store.put_response("small", response(0))
        await store.put_response("big", response(1, size=5_000))
        assert await store.get_response("big", "key-a") is not None
        assert await store.get_response("small", "key-a") is None
    finally:
        await store.close()


# -- replies in flight (crash recovery) --------------------------------------------------------------------------

def _reply(rid: str = "r1", owner: str = "dead", **kw):
    from hermes_gateway._core.store.base import ReplyInFlight

    return ReplyInFlight(rid, "telegram", "42", kw.pop("thread_id", None), "private", "7", "what is 2+2?", owner, **kw)


async def test_a_reply_in_flight_is_kept_with_what_it_shows_until_it_ends(store):
    from hermes_gateway._core.store.base import ShownMessage

    await store.begin_reply(_reply())
    shown = (ShownMessage("100", "42", None, "Two plus", ended=True), ShownMessage("101", "42", None, "two is"))
    await store.update_reply("r1", shown)
    await store.update_reply("unknown", shown)  # nothing happens
    [found] = await store.replies_in_flight()
    assert (found.id, found.platform, found.chat_id, found.message_id, found.text, found.owner) == \
        ("r1", "telegram", "42", "7", "what is 2+2?", "dead")
    assert found.shown == shown and found.thread_id is None and found.chat_kind == "private"
    await store.end_reply("r1")
    assert await store.replies_in_flight() == []


async def test_recording_the_turn_clears_its_reply_in_flight_in_the_same_write(store):
    await store.begin_reply(_reply("r1"))
    await store.begin_reply(_reply("r2", thread_id="t"))
    await store.record_turn(CHAT, [user("what is 2+2?"), assistant("4")], in_flight="r1")
    assert [r.id for r in await store.replies_in_flight()] == ["r2"]
    assert [m["content"] for m in await store.history(CHAT)] == ["what is 2+2?", "4"]


async def test_a_turn_that_cannot_be_stored_keeps_its_reply_in_flight(store):
    await store.begin_reply(_reply("r1"))
    with pytest.raises(StoreError):
        await store.record_turn(CHAT, [user("x"), {"role": "assistant", "content": object()}], in_flight="r1")
    assert [r.id for r in await store.replies_in_flight()] == ["r1"]


async def test_one_claimer_wins_a_reply_in_flight(store):
    await store.begin_reply(_reply("r1", owner="dead"))
    claims = await asyncio.gather(*(store.claim_reply("r1", "dead", f"replica-{i}") for i in range(8)))
    won = [c for c in claims if c is not None]
    assert len(won) == 1 and won[0].owner.startswith("replica-")
    assert await store.claim_reply("r1", "dead", "late") is None
    assert (await store.replies_in_flight())[0].owner == won[0].owner


async def test_claims_from_two_store_connections_at_once_let_one_win(make_store):
    first, second = make_store(), make_store()
    try:
        await first.begin_reply(_reply("r1", owner="dead"))
        if isinstance(first, MemoryStore):
            second = first  # one process's memory: the same instance is what two users share
        claims = await asyncio.gather(first.claim_reply("r1", "dead", "a"), second.claim_reply("r1", "dead", "b"))
        assert sum(c is not None for c in claims) == 1
    finally:
        await first.close()
        await second.close()
