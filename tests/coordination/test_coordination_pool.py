"""Many shared operations at once on one replica: they queue for the client's connections, never an "outage".

redis-py's default pool raises ``MaxConnectionsError`` (a ``ConnectionError``) past 100 connections in
use, which the coordination took for Redis being unreachable: under a burst of chats (bench_replicas.py,
1,000 at once) a replica went on with its own budgets, its own dedupe and no chat lease, and opened a
new connection per operation beyond the ones it had.
"""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from hermes_gateway._core.coordination.base import NO_TICKET
from hermes_gateway._core.coordination.redis import POOL_SIZE, RedisCoordination
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
