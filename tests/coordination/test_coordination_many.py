"""A replica with many chats at once: its operations queue for the client's connections (never an "outage"),
and its leases are renewed in a few calls per tick, not one call (and one task) per chat.

redis-py's default pool raises ``MaxConnectionsError`` (a ``ConnectionError``) past 100 connections in
use, which the coordination took for Redis being unreachable: under a burst of chats (bench_replicas.py,
1,000 at once) a replica went on with its own budgets, its own dedupe and no chat lease, and opened a
new connection per operation beyond the ones it had. Each held lease also had a task of its own renewing it
every ttl/3: 1,000 replies in flight made 1,000 wake-ups and script calls per tick.
"""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from hermes_gateway._core.coordination.base import NO_TICKET
from hermes_gateway._core.coordination.redis import POOL_SIZE, RENEW_BATCH, RedisCoordination
from hermes_gateway._core.platform import RateBudget

AT_ONCE = 300  # more than redis-py's default pool of 100 connections


async def _burst(url: str) -> tuple[list[int], list[object], int, int]:
    coordination = RedisCoordination(url)
    await coordination.start()
    watcher = aioredis.Redis.from_url(url)
    try:
        tickets = await asyncio.gather(*(coordination.admit([("telegram", str(n))]) for n in range(AT_ONCE)))
        chat, bot = RateBudget(rate=1000.0, burst=AT_ONCE), RateBudget(rate=1000.0, burst=AT_ONCE)
        grants = await asyncio.gather(*(coordination.shared_budget("telegram", str(n), chat, bot).acquire()
                                        for n in range(AT_ONCE)))
        clients = len(await watcher.client_list()) - 1  # not the watcher itself
        return [t for [t] in tickets], list(grants), coordination.outage.fallbacks, clients
    finally:
        await watcher.aclose()
        await coordination.close()


def test_a_burst_beyond_the_pool_waits_for_a_connection_instead_of_falling_back(redis_url):
    tickets, grants, fallbacks, clients = asyncio.run(_burst(redis_url))
    assert fallbacks == 0
    assert NO_TICKET not in tickets and sorted(tickets) == list(range(1, AT_ONCE + 1))  # each admitted, in order
    assert None not in grants  # every call charged to the shared budget
    assert clients <= POOL_SIZE + 1  # the pool's connections (one of them the events subscription), no more


LEASES = 300
TTL = 1.5


async def _hold_many(url: str) -> tuple[int, int, list[str], list[bool]]:
    coordination = RedisCoordination(url, lease_ttl=TTL)
    await coordination.start()
    watcher = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        leases = [coordination.lease(("telegram", str(n), None)) for n in range(LEASES)]
        for lease in leases:
            await lease.acquire(lambda: 1, lambda: None)
        before = (await watcher.info("commandstats"))["cmdstat_evalsha"]["calls"]
        ttls = []
        while len(ttls) < 3:  # three renewal ticks seen on the first lease's expiry (bounded by pytest's timeout)
            ttl = await watcher.pttl(leases[0].keys[0])
            if not ttls or ttl > ttls[-1]:
                ttls.append(ttl)
            else:
                ttls[-1] = ttl
            await asyncio.sleep(0.02)
        calls = (await watcher.info("commandstats"))["cmdstat_evalsha"]["calls"] - before
        owners = [await watcher.get(lease.keys[0]) for lease in leases]
        return calls, len(ttls) - 1, owners, [lease.held for lease in leases]
    finally:
        await watcher.aclose()
        await coordination.close()


def test_held_leases_are_renewed_together_in_a_few_calls_per_tick(redis_url):
    calls, ticks, owners, held = asyncio.run(_hold_many(redis_url))
    assert set(owners) == {owners[0]} and owners[0] is not None and all(held)  # every lease kept, each renewed
    batches = -(-LEASES // RENEW_BATCH)
    assert calls <= batches * (ticks + 2)  # (one tick may have begun before the count and one after it)


async def _renew_while_the_pool_is_busy(url: str) -> tuple[bool, str | None]:
    coordination = RedisCoordination(url, lease_ttl=1.2)
    await coordination.start()
    watcher = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        lease = coordination.lease(("telegram", "busy", None))
        await lease.acquire(lambda: 1, lambda: None)
        assert coordination.client is not None
        # every connection of the pool taken by a slow operation, for longer than the lease lasts (within the
        # client's socket timeout of 2 s)
        blocked = [asyncio.ensure_future(coordination.client.blpop([f"nothing:{n}"], timeout=1.8))
                   for n in range(POOL_SIZE)]
        first = await watcher.pttl(lease.keys[0])
        while True:  # a renewal seen on the server (bounded by pytest's timeout) or the lease gone
            ttl = await watcher.pttl(lease.keys[0])
            if ttl < 0 or ttl > first:
                break
            first = min(first, ttl)
            await asyncio.sleep(0.02)
        owner = await watcher.get(lease.keys[0])
        for call in blocked:
            call.cancel()
        await asyncio.gather(*blocked, return_exceptions=True)
        return lease.held, owner
    finally:
        await watcher.aclose()
        await coordination.close()


def test_a_lease_is_renewed_while_every_pooled_connection_is_busy(redis_url):
    held, owner = asyncio.run(_renew_while_the_pool_is_busy(redis_url))
    assert held and owner is not None  # renewed on its own connection, not queued behind the burst


async def _holders(url: str) -> tuple[list[str | None], list[str | None], dict[str, int], str, str]:
    here, there = RedisCoordination(url), RedisCoordination(url)
    await here.start()
    await there.start()
    watcher = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        chats = [("telegram", str(n), None) for n in range(300)]
        for n, chat in enumerate(chats):  # a third held here, a third by the other replica, a third free
            if n % 3 < 2:
                await (here if n % 3 == 0 else there).lease(chat).acquire(lambda: 1, lambda: None)
        stats = await watcher.info("commandstats")
        before = {name: int(stats.get(f"cmdstat_{name}", {"calls": 0})["calls"]) for name in ("get", "mget")}
        together = await here.lease_holders(chats)
        stats = await watcher.info("commandstats")
        calls = {name: int(stats.get(f"cmdstat_{name}", {"calls": 0})["calls"]) - before[name]
                 for name in ("get", "mget")}
        one_by_one = [await here.lease_holder(chat) for chat in chats]
        return together, one_by_one, calls, here.replica_id, there.replica_id
    finally:
        await watcher.aclose()
        await here.close()
        await there.close()


def test_who_holds_many_chats_is_asked_in_one_round_trip(redis_url):
    together, one_by_one, calls, here, there = asyncio.run(_holders(redis_url))
    assert together == one_by_one == [[here, there, None][n % 3] for n in range(300)]
    assert calls == {"get": 0, "mget": 1}


async def _admit_while_the_pool_is_busy(url: str) -> tuple[list[int], int, int]:
    coordination = RedisCoordination(url)
    await coordination.start()
    try:
        assert coordination.client is not None
        # every connection out with a slow command for 1 s, five times the pool's wait (POOL_WAIT, 0.2 s here);
        # the events subscription holds one of them
        blocked = [asyncio.ensure_future(coordination.client.blpop([f"nothing:{n}"], timeout=1.0))
                   for n in range(POOL_SIZE - 1)]
        await asyncio.sleep(0.1)
        tickets = await coordination.admit([("telegram", "waits")])
        await asyncio.gather(*blocked)
        return tickets, coordination.outage.fallbacks, coordination.outage.outages
    finally:
        await coordination.close()


def test_an_operation_waits_out_a_pool_busy_longer_than_its_wait_instead_of_falling_back(redis_url, monkeypatch):
    # "No connection available" after POOL_WAIT while all the connections were out with commands read as Redis
    # being unreachable: the replica went on with its own budgets, dedupe and no leases while Redis answered
    from hermes_gateway._core.coordination import redis as coordination_redis

    monkeypatch.setattr(coordination_redis, "POOL_WAIT", 0.2)
    tickets, fallbacks, outages = asyncio.run(_admit_while_the_pool_is_busy(redis_url))
    assert tickets != [NO_TICKET] and fallbacks == 0 and outages == 0
