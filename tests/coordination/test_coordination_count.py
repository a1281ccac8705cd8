"""``Coordination.count``: the loop guard's counter (``groups.max_bot_turns``, issue 38), one for every replica.

Alone, the counter is this process's, in fixed windows; with Redis two replicas add to one counter, and
each falls back to its own while Redis cannot be asked.
"""

from __future__ import annotations

import asyncio

from hermes_gateway._core.coordination.local import LocalCoordination
from hermes_gateway._core.coordination.redis import RedisCoordination


async def test_alone_the_counter_counts_per_name_within_its_window_then_starts_again():
    now = [100.0]
    coordination = LocalCoordination()
    coordination.count_clock = lambda: now[0]
    assert [await coordination.count("a", 600) for _ in range(3)] == [1, 2, 3]
    assert await coordination.count("b", 600) == 1
    now[0] += 599.9
    assert await coordination.count("a", 600) == 4
    now[0] += 0.2  # the window that began at 100 s is over
    assert await coordination.count("a", 600) == 1
    assert len(coordination.__dict__["_counters"]) == 1, "ended windows are forgotten (b's too)"


async def test_two_replicas_add_to_one_counter_which_expires_with_its_window(redis_url):
    one, two = RedisCoordination(redis_url), RedisCoordination(redis_url)
    await one.start()
    await two.start()
    try:
        assert [await one.count("bot-turns:telegram:-1", 600), await two.count("bot-turns:telegram:-1", 600),
                await one.count("bot-turns:telegram:-1", 600)] == [1, 2, 3]
        assert await two.count("bot-turns:telegram:-2", 0.2) == 1
        assert one.client is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while await one.client.exists("hermes:count:bot-turns:telegram:-2") and loop.time() < deadline:
            await asyncio.sleep(0.05)  # Redis expires the window's key on its own clock
        assert await one.count("bot-turns:telegram:-2", 0.2) == 1
        one.outage.available = lambda: False  # Redis cannot be asked: this replica counts alone meanwhile
        assert await one.count("bot-turns:telegram:-1", 600) == 1
    finally:
        await two.close()
        await one.close()


async def test_two_replicas_answer_another_bot_at_most_max_bot_turns_times_in_total(redis_url):
    """The loop guard holds across replicas: a bot's messages spread over two of them get two replies, not four."""
    from coordination_helpers import Webhooks, reference, replica

    ref = reference()
    groups = {"bots": "mentions", "max_bot_turns": 2}
    async with replica(ref, redis_url, groups=groups, tokens_per_second=0) as a, \
            replica(ref, redis_url, groups=groups, tokens_per_second=0) as b:
        hooks = Webhooks(a, b)
        reports = [await hooks.deliver(i % 2, "g", f"echo: ping {i}", chat_kind="group", mentioned=True,
                                       from_bot=True, sender_id="other-bot") for i in range(4)]
    assert [r is not None for r in reports] == [True, True, False, False]
    assert ref.chat("g").screen == ["ping 0", "ping 1"]
