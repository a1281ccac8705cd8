"""Claiming an occurrence: the coordination layer first (local memory, or Lua on Redis), then the store."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace


from hermes_gateway._core.coordination.local import LocalCoordination
from hermes_gateway._core.coordination.redis import RedisCoordination
from hermes_gateway._core.outbound.claim import claim_reminder, claim_schedule
from hermes_gateway._core.store import MemoryStore

AT = 1_767_225_600.0



async def test_alone_an_occurrence_is_claimed_once_and_only_forward():
    local = LocalCoordination()
    assert await local.claim("schedule:a", AT) is True
    assert await local.claim("schedule:a", AT) is False
    assert await local.claim("schedule:a", AT - 1) is False
    assert await local.claim("schedule:b", AT) is True
    assert await local.claim("schedule:a", AT + 10) is True


async def test_on_redis_one_of_many_replicas_wins_each_occurrence(redis_server):
    redis_server.flush()
    replicas = [RedisCoordination(redis_server.url) for _ in range(4)]
    for r in replicas:
        await r.start()
    try:
        for occurrence in range(3):
            won = await asyncio.gather(*(r.claim("schedule:pulse", AT + occurrence) for r in replicas))
            assert sorted(won) == [False, False, False, True]
        assert await replicas[0].claim("schedule:pulse", AT) is False, "an earlier occurrence stays taken"
    finally:
        for r in replicas:
            await r.close()


async def test_with_redis_gone_the_store_decides(redis_server):
    redis_server.flush()
    coordination = RedisCoordination(redis_server.url)
    await coordination.start()
    redis_server.stop()
    try:
        assert await coordination.claim("schedule:x", AT) is None
        store = MemoryStore()
        gateway = SimpleNamespace(coordination=coordination, store=store)
        assert await claim_schedule(gateway.coordination, gateway.store, "x", AT) is True
        assert await claim_schedule(gateway.coordination, gateway.store, "x", AT) is False, "recorded in the store: not again"
    finally:
        await coordination.close()
        redis_server.start()


async def test_a_reminder_firing_is_taken_by_one_and_moves_on():
    store = MemoryStore()
    reminder = await store.add_reminder("reference", "c", None, "tea", AT, 60.0, AT - 100, 5)
    one = SimpleNamespace(coordination=LocalCoordination(), store=store)
    two = SimpleNamespace(coordination=LocalCoordination(), store=store)
    assert await claim_reminder(one.coordination, one.store, reminder, AT + 60) is True
    assert await claim_reminder(two.coordination, two.store, reminder, AT + 60) is False, "the store's compare-and-set refuses the second"
    assert [r.next_at for r in await store.due_reminders(AT + 60)] == [AT + 60]
