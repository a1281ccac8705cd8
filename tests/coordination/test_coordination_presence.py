"""Which replicas are alive and which chat each holds (the dashboard's view), on a real redis-server."""

from __future__ import annotations

import asyncio

from hermes_gateway._core.coordination.presence import parse_lease_key
from hermes_gateway._core.coordination.redis import RedisCoordination


def test_a_lease_key_names_its_chat():
    assert parse_lease_key("hermes", 'hermes:lease:telegram:["42",null]') == {
        "platform": "telegram", "chat_id": "42", "thread_id": None}
    assert parse_lease_key("hermes", 'hermes:lease:slack:["C1","17.2"]')["thread_id"] == "17.2"
    assert parse_lease_key("hermes", "hermes:lease:broken") is None
    assert parse_lease_key("hermes", "other:lease:x:[1,null]") is None


async def test_replicas_alive_and_the_chat_each_holds_and_a_dead_one_disappears(redis_url):
    one = RedisCoordination(redis_url, lease_ttl=1.0, replica_id="aaaa")
    two = RedisCoordination(redis_url, lease_ttl=1.0, replica_id="bbbb")
    await one.start()
    await two.start()
    try:
        lease = two.lease(("telegram", "42", None))
        await lease.acquire(lambda: 1, lambda: None)
        await asyncio.sleep(0.1)
        seen = await one.replicas()
        assert seen == [{"id": "aaaa", "alive": True, "chats": []},
                        {"id": "bbbb", "alive": True,
                         "chats": [{"platform": "telegram", "chat_id": "42", "thread_id": None}]}]
        two.abandon()  # dies: its presence and its lease are no longer renewed
        deadline = asyncio.get_running_loop().time() + 5
        while asyncio.get_running_loop().time() < deadline and len(await one.replicas()) > 1:
            await asyncio.sleep(0.2)
        assert await one.replicas() == [{"id": "aaaa", "alive": True, "chats": []}]
    finally:
        await two.close()
        await one.close()


async def test_a_clean_stop_removes_the_replica_at_once(redis_url):
    one = RedisCoordination(redis_url, lease_ttl=30.0, replica_id="aaaa")
    two = RedisCoordination(redis_url, lease_ttl=30.0, replica_id="bbbb")
    await one.start()
    await two.start()
    try:
        await asyncio.sleep(0.1)
        assert [r["id"] for r in await one.replicas()] == ["aaaa", "bbbb"]
        await two.close()
        assert [r["id"] for r in await one.replicas()] == ["aaaa"]
    finally:
        await one.close()
