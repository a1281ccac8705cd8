"""An ``every: 1s`` schedule on two replicas sharing Redis, one of them restarted: each occurrence delivered once.

Real time, real Redis (:mod:`hermes_gateway.testing.redis`), each replica
with a store of its own, so what keeps an occurrence from running twice is
the coordination layer's claim; the restarted replica's store keeps what it
already ran.
"""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from hermes_gateway import RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import ConversationKey, MemoryStore
from hermes_gateway.testing import ReferencePlatform



def replica(platform: ReferencePlatform, store: MemoryStore, redis_url: str | None) -> Gateway:
    config = parse_config({
        "platforms": {"reference": {"enabled": True}},
        "schedules": [{"name": "pulse", "every": "1s", "platform": "reference", "chat": "ops", "text": "pulse"}],
        **({"coordination": {"url": redis_url}} if redis_url else {}),
    }, source="config.yaml", env={})
    gateway = Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[platform]))
    gateway.store = store
    return gateway


async def run_two_replicas_with_a_restart(redis_url: str | None) -> tuple[list[float], float, float]:
    platform = ReferencePlatform(budgets={"default": RateBudget(rate=20.0, burst=5)})
    sent: list[float] = []
    platform.on_call = lambda chat, call: sent.append(time.time()) if call.kind == "send" and call.outcome == "ok" \
        else None
    stores = [MemoryStore(), MemoryStore()]
    a, b = replica(platform, stores[0], redis_url), replica(platform, stores[1], redis_url)
    began = time.time()
    await a.start()
    await b.start()
    await asyncio.sleep(4.2)
    await a.stop()                       # replica A restarts; B goes on alone meanwhile
    await asyncio.sleep(1.5)
    a = replica(platform, stores[0], redis_url)
    await a.start()
    await asyncio.sleep(4.2)
    await a.stop()
    await b.stop()
    return sent, began, time.time()


async def test_each_occurrence_is_delivered_once_across_two_replicas_and_a_restart(redis_server):
    redis_server.flush()
    sent, began, ended = await run_two_replicas_with_a_restart(redis_server.url)
    occurrences = [math.floor(at) for at in sent]      # an occurrence is a whole second; sent right after it
    assert len(occurrences) == len(set(occurrences)), f"an occurrence was delivered twice: {occurrences}"
    expected = set(range(math.floor(began) + 1, math.floor(ended)))
    assert len(expected - set(occurrences)) <= 1, f"missed occurrences: {sorted(expected - set(occurrences))}"
    assert len(occurrences) >= 8


async def test_without_a_shared_claim_the_same_replicas_would_deliver_twice():
    """The check above can fail: with stores of their own and no Redis, both replicas run every occurrence."""
    sent, _, _ = await run_two_replicas_with_a_restart(None)
    occurrences = [math.floor(at) for at in sent]
    assert len(occurrences) > len(set(occurrences))


async def test_a_reminder_on_two_replicas_sharing_a_database_and_redis_fires_once(redis_server, tmp_path):
    from hermes_gateway._core.store import SQLiteStore

    redis_server.flush()
    platform = ReferencePlatform(budgets={"default": RateBudget(rate=20.0, burst=5)})
    setup = SQLiteStore(tmp_path / "state.db")
    now = time.time()
    await setup.add_reminder("reference", "ops", None, "rotate the keys", now + 1.5, 1.0 * 60, now, 5)
    await setup.add_reminder("reference", "ops", None, "stretch", now + 1.5, None, now, 5)
    await setup.close()

    def reminders_replica() -> Gateway:
        config = parse_config({"platforms": {"reference": {"enabled": True}}, "tools": {"reminders": True},
                               "store": {"path": str(tmp_path / "state.db")},
                               "coordination": {"url": redis_server.url}}, source="config.yaml", env={})
        return Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[platform]))

    replicas = [reminders_replica(), reminders_replica()]
    for gateway in replicas:
        await gateway.start()
    await asyncio.sleep(3.5)
    left = await replicas[0].store.reminders(ConversationKey("reference", "ops"))
    for gateway in replicas:
        await gateway.stop()
    assert sorted(platform.chat("ops").screen) == ["⏰ Reminder: rotate the keys", "⏰ Reminder: stretch"]
    assert [(r.text, r.next_at) for r in left] == [("rotate the keys", pytest.approx(now + 1.5 + 60))]
