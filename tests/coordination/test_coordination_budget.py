"""The shared budget script on a real Redis: many concurrent callers never exceed the bucket."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings, strategies as st

from hermes_gateway._core.coordination.redis import RedisCoordination
from hermes_gateway._core.platform import RateBudget

EPSILON = 1e-6  # the server clock's microseconds


def most_in_any_window(times: list[float], rate: float, burst: int) -> list[str]:
    """Every window [t_i, t_j] that holds more calls than ``rate * (t_j - t_i) + burst``."""
    times = sorted(times)
    over = []
    for i in range(len(times)):
        for j in range(i, len(times)):
            allowed = rate * (times[j] - times[i]) + burst
            if j - i + 1 > allowed + EPSILON:
                over.append(f"{j - i + 1} calls in {times[j] - times[i]:.4f}s (allowed {allowed:.3f})")
    return over


async def _spend(url: str, *, chats: int, callers: int, calls: int, chat: RateBudget, bot: RateBudget,
                 block: float | None) -> tuple[dict[str, list[float]], list[float]]:
    replicas = [RedisCoordination(url) for _ in range(2)]  # two replicas, several callers each
    for replica in replicas:
        await replica.start()
    try:
        grants: dict[str, list[float]] = {str(c): [] for c in range(chats)}
        blocked_at: list[float] = []

        async def caller(n: int) -> None:
            chat_id = str(n % chats)
            budget = replicas[n % 2].shared_budget("reference", chat_id, chat, bot)
            for k in range(calls):
                if block is not None and n == 0 and k == 1:
                    budget.block("chat", block)  # a 429: no replica calls into chat 0 for `block` seconds
                    await asyncio.sleep(0.01)  # the block is published beside the caller
                    blocked_at.append(float(await replicas[0].client.hget(budget.keys[0], "blocked")))
                granted = await budget.acquire()
                assert granted is not None and granted.chat_left >= 0 and granted.bot_left >= 0
                grants[chat_id].append(granted.at)

        await asyncio.gather(*(caller(n) for n in range(callers)))
        return grants, blocked_at
    finally:
        for replica in replicas:
            await replica.close()


@settings(max_examples=12, deadline=None)
@given(chats=st.integers(1, 3), callers=st.integers(2, 8), calls=st.integers(3, 8),
       chat_rate=st.sampled_from([20.0, 50.0, 100.0]), chat_burst=st.integers(1, 4),
       bot_rate=st.sampled_from([40.0, 150.0, 1e9]), bot_burst=st.integers(1, 6))
def test_concurrent_callers_never_exceed_the_chat_or_bot_bucket(redis_server, chats, callers, calls, chat_rate,
                                                               chat_burst, bot_rate, bot_burst):
    redis_server.flush()
    chat, bot = RateBudget(chat_rate, chat_burst), RateBudget(bot_rate, bot_burst)
    grants, _ = asyncio.run(_spend(redis_server.url, chats=chats, callers=callers, calls=calls, chat=chat,
                                      bot=bot, block=None))
    assert sum(len(g) for g in grants.values()) == callers * calls  # every caller got through
    for chat_id, times in grants.items():
        assert most_in_any_window(times, chat_rate, chat_burst) == [], f"chat {chat_id}"
    everything = [t for times in grants.values() for t in times]
    assert most_in_any_window(everything, bot_rate, bot_burst) == [], "bot"


def test_a_429_blocks_every_replica_until_it_has_passed(redis_server):
    redis_server.flush()
    chat, bot = RateBudget(200.0, 5), RateBudget(1e9, 10**9)
    grants, blocked_at = asyncio.run(_spend(redis_server.url, chats=1, callers=6, calls=5, chat=chat,
                                                   bot=bot, block=0.3))
    (until,) = blocked_at
    start = until - 0.3 - 0.001
    during = [t for t in grants["0"] if start < t < until]
    assert during == []  # no replica's caller got a call in while the 429 lasted
    assert len([t for t in grants["0"] if t >= until]) > 10  # and they all went on after it
