"""The operator's records (chat choices, approvals, pairing codes, usage), on every backend.

Memory, SQLite and a real PostgreSQL pass the same tests; the SQLite and
PostgreSQL ones also outlive a close (a restart) and, on PostgreSQL, are
seen at once by a second store on the same database (another replica).
"""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway._core.store import ConversationKey
from hermes_gateway._core.store.operator_records import Pairing, UsageRecord
from hermes_gateway._core.store.postgres import PostgresStore

CHAT = ConversationKey("telegram", "42")
THREAD = ConversationKey("telegram", "42", "7")
NOW = 1_700_000_000.0




@pytest.fixture
async def store(make_store):
    s = make_store()
    yield s
    await s.close()


def pairing(code: str = "ABCD2345", user: str = "u1", created: float = NOW, ttl: float = 3600) -> Pairing:
    return Pairing(code, "telegram", user, "chat-" + user, created, created + ttl)


async def test_chat_settings_are_per_chat_and_thread_and_can_be_cleared(store):
    assert await store.chat_settings(CHAT) == {}
    await store.set_chat_setting(CHAT, "model", "big")
    await store.set_chat_setting(CHAT, "persona", "pirate")
    await store.set_chat_setting(CHAT, "model", "small")
    assert await store.chat_settings(CHAT) == {"model": "small", "persona": "pirate"}
    assert await store.chat_settings(THREAD) == {}
    await store.set_chat_setting(CHAT, "persona", None)
    assert await store.chat_settings(CHAT) == {"model": "small"}


async def test_choices_and_approvals_survive_a_restart(make_store):
    first = make_store()
    await first.set_chat_setting(CHAT, "persona", "pirate")
    await first.approve_user("telegram", "u9", "admin", NOW)
    await first.record_usage(UsageRecord(NOW, "telegram", "42", None, "u9", "big", 10, 5))
    await first.close()
    second = make_store()
    try:
        assert await second.chat_settings(CHAT) == {"persona": "pirate"}
        assert await second.is_approved("telegram", "u9")
        assert [(r.model, r.input_tokens, r.output_tokens) for r in await second.usage()] == [("big", 10, 5)]
    finally:
        await second.close()


async def test_one_pending_code_per_user_and_an_unexpired_one_stands(store):
    assert await store.add_pairing(pairing("AAAA2222")) == pairing("AAAA2222")
    # asked again before it expires: the same code, not a second one
    assert (await store.add_pairing(pairing("BBBB3333", created=NOW + 10))).code == "AAAA2222"
    assert [p.code for p in await store.pairings(NOW + 20)] == ["AAAA2222"]
    # expired: a new code replaces it
    renewed = await store.add_pairing(pairing("CCCC4444", created=NOW + 4000))
    assert renewed.code == "CCCC4444"
    assert [p.code for p in await store.pairings(NOW + 4001)] == ["CCCC4444"]
    assert await store.redeem_pairing("AAAA2222", "op", NOW + 4001) is None


async def test_redeeming_a_code_approves_its_user_once(store):
    await store.add_pairing(pairing("AAAA2222", user="u1"))
    assert not await store.is_approved("telegram", "u1")
    assert await store.redeem_pairing("WRONG999", "op", NOW + 1) is None
    assert not await store.is_approved("telegram", "u1")
    redeemed = await store.redeem_pairing("AAAA2222", "op", NOW + 1)
    assert redeemed is not None and redeemed.user_id == "u1"
    assert await store.is_approved("telegram", "u1")
    assert await store.redeem_pairing("AAAA2222", "op", NOW + 2) is None  # used up
    assert [(a.platform, a.user_id, a.approved_by) for a in await store.approvals()] == [("telegram", "u1", "op")]
    assert await store.pairings(NOW + 2) == []


async def test_an_expired_code_changes_nothing(store):
    await store.add_pairing(pairing("AAAA2222", ttl=60))
    assert await store.redeem_pairing("AAAA2222", "op", NOW + 61) is None
    assert not await store.is_approved("telegram", "u1")


async def test_revoke_forgets_the_approval_and_any_pending_code(store):
    await store.approve_user("telegram", "u1", "op", NOW)
    await store.add_pairing(pairing("AAAA2222", user="u2"))
    assert await store.revoke_user("telegram", "u1")
    assert await store.revoke_user("telegram", "u2")
    assert not await store.revoke_user("telegram", "u3")
    assert not await store.is_approved("telegram", "u1")
    assert await store.pairings(NOW) == []


async def test_usage_records_come_back_in_order_and_since_a_time(store):
    for i in range(3):
        await store.record_usage(UsageRecord(NOW + i, "telegram", "42", "7" if i else None, f"u{i}", "m", i, 2 * i,
                                             estimated=i == 2))
    records = await store.usage()
    assert [(r.user_id, r.thread_id, r.input_tokens, r.output_tokens, r.estimated) for r in records] == [
        ("u0", None, 0, 0, False), ("u1", "7", 1, 2, False), ("u2", "7", 2, 4, True)]
    assert [r.user_id for r in await store.usage(since=NOW + 1)] == ["u1", "u2"]


async def test_postgres_replicas_see_each_other_at_once(postgres_url):
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        await one.add_pairing(pairing("AAAA2222"))
        results = await asyncio.gather(one.redeem_pairing("AAAA2222", "a", NOW + 1),
                                       two.redeem_pairing("AAAA2222", "b", NOW + 1))
        assert sum(r is not None for r in results) == 1  # redeemed exactly once
        assert await two.is_approved("telegram", "u1")
        await two.set_chat_setting(CHAT, "model", "big")
        assert await one.chat_settings(CHAT) == {"model": "big"}
    finally:
        await one.close()
        await two.close()


async def test_a_postgres_database_made_before_these_tables_gets_them_at_open(postgres_url):
    import time

    import psycopg

    from hermes_gateway._core.store.postgres import SCHEMA, SCHEMA_VERSION

    with psycopg.connect(postgres_url, autocommit=True) as conn:  # what an older hermes-gateway left behind
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO hermes_schema_version (version, applied_at) VALUES (%s, %s)",
                     (SCHEMA_VERSION, time.time()))
    store = PostgresStore(postgres_url)
    try:
        await store.set_chat_setting(CHAT, "persona", "pirate")
        assert await store.chat_settings(CHAT) == {"persona": "pirate"}
    finally:
        await store.close()
