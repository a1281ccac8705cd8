"""With ``coordination.url`` the dashboard lists every replica alive and the chat each holds (a real redis-server)."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway import Incoming, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import MemoryStore
from hermes_gateway._core.web.dashboard_state import snapshot
from hermes_gateway.testing import ReferencePlatform
from hermes_gateway.testing.redis import RedisServer


@pytest.fixture(scope="module")
def redis_url():
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.stop()


def replica(ref: ReferencePlatform, redis_url: str, store: MemoryStore) -> Gateway:
    data = {"model": {"demo": {"tokens_per_second": 10}},
            "streaming": {"reference": {"enabled": True, "edit_interval": 0.2, "min_tokens": 1}},
            "platforms": {"reference": {"enabled": True}},
            "coordination": {"url": redis_url, "lease_ttl": 3}}
    gateway = Gateway(parse_config(data, env={}), make_plugins(builtins=(), load_entry_points=False, extra=[ref]))
    gateway.store = store
    return gateway


async def test_both_replicas_are_alive_and_the_one_answering_holds_the_chat(redis_url):
    ref = ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)})
    store = MemoryStore()
    one, two = replica(ref, redis_url, store), replica(ref, redis_url, store)
    async with one, two:
        words = " ".join(f"w{i}" for i in range(40))  # ~4 s of words
        reply = two.receive(Incoming("reference", "7", f"echo: {words}", update_id="u1"))

        async def listed():
            return (await snapshot(one.console_sources))["replicas"]

        replicas = await listed()
        deadline = asyncio.get_running_loop().time() + 10
        while not any(r["chats"] for r in replicas["list"]) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
            replicas = await listed()
        assert replicas["shared"] is True
        by_id = {r["id"]: r for r in replicas["list"]}
        assert set(by_id) == {one.coordination.replica_id, two.coordination.replica_id}
        assert all(r["alive"] for r in replicas["list"])
        assert by_id[two.coordination.replica_id]["chats"] == [
            {"platform": "reference", "chat_id": "7", "thread_id": None}]
        assert by_id[one.coordination.replica_id]["chats"] == []
        await reply
