"""The store's CPU per reply when many replies end together (issue 39; run by hand).

``python bench/bench_store_burst.py [--replies 1000] [--repeats 3] [--src DIR]``: N replies at once do what a
Telegram reply does to the SQLite store (``scale.py``'s turn: the person's update remembered, the history
read, the chat's settings read, the reply in flight begun and updated twice, the turn recorded with it
cleared, the usage recorded), all N tasks at once, each step awaited in order as the gateway does. Prints
CPU (``time.process_time``: the store's thread and the event loop's) and the loop thread's alone
(``time.thread_time``) per reply, medians. ``--src`` runs another tree (``PYTHONPATH``) for a before/after
in the same go. ``--trickle``: each reply's end alone, one after another (the window after the model's last
token, when finals leave at the bot's 30/s and nothing queues beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path
from hermes_gateway._core.store import ConversationKey, SQLiteStore
from hermes_gateway._core.store.base import ReplyInFlight
from hermes_gateway._core.messages.shown import ShownMessage
from hermes_gateway._core.store.operator_records import UsageRecord

async def main(replies):
    store = SQLiteStore(Path(tempfile.mkdtemp()) / "state.db")
    await store.open()

    async def reply(n):
        key = ConversationKey("telegram", str(10_000 + n))
        await store.remember_updates([("telegram", str(n))])
        await store.history(key)
        await store.chat_settings(key)
        flight = ReplyInFlight(f"r{n}", "telegram", key.chat_id, None, "private", str(n), "echo: hello", "me")
        await store.begin_reply(flight)
        text = "w1 w2 w3 " * 30
        await store.update_reply(flight.id, (ShownMessage(str(n), key.chat_id, None, text[:90]),))
        await store.update_reply(flight.id, (ShownMessage(str(n), key.chat_id, None, text),))
        await store.record_turn(key, [{"role": "user", "content": "echo: hello"},
                                      {"role": "assistant", "content": text}], in_flight=flight.id)
        await store.record_usage(UsageRecord(time.time(), "telegram", key.chat_id, None, "u", "demo", 10, 300))

    async def end(n, together):  # a reply's end after the model's last token: its intent, then turn and usage
        key = ConversationKey("telegram", str(10_000 + n))
        text = "w1 w2 w3 " * 200
        await store.update_reply(f"r{n}", (ShownMessage(str(n), key.chat_id, None, text),))
        turn = store.record_turn(key, [{"role": "user", "content": "echo: hello"},
                                       {"role": "assistant", "content": text}], in_flight=f"r{n}")
        usage = store.record_usage(UsageRecord(time.time(), "telegram", key.chat_id, None, "u", "demo", 10, 300))
        if together:
            await asyncio.gather(turn, usage)
        else:
            await turn
            await usage

    await asyncio.gather(*(reply(n) for n in range(20)))  # warm: the thread, the statements
    mode = sys.argv[2] if len(sys.argv) > 2 else "burst"
    if mode != "burst":  # the ends one at a time, as the finals trickle out at the bot's 30/s
        await asyncio.gather(*(reply(n) for n in range(100, 100 + replies)))  # each chat with a turn before
        for n in range(100, 100 + replies):  # ... and a reply in flight now
            await store.begin_reply(ReplyInFlight(f"r{n}", "telegram", str(10_000 + n), None, "private", str(n),
                                                  "echo: hello", "me"))
    cpu, loop_cpu, wall = time.process_time(), time.thread_time(), time.perf_counter()
    if mode == "burst":
        await asyncio.gather(*(reply(n) for n in range(100, 100 + replies)))
    else:
        for n in range(100, 100 + replies):
            await end(n, mode == "together")
    result = {"cpu": time.process_time() - cpu, "loop": time.thread_time() - loop_cpu,
              "wall": time.perf_counter() - wall}
    await store.close()
    print(json.dumps(result))

asyncio.run(main(int(sys.argv[1])))
"""


def once(replies: int, src: str | None, mode: str = "burst") -> dict[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", CHILD, str(replies), mode], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--src", help="another tree's root (its hermes_gateway), run alternately with this one")
    parser.add_argument("--trickle", action="store_true",
                        help="only each reply's end (the final's intent, the turn, the usage), one reply at a time "
                             "as finals leave at 30/s: the turn and usage one after the other (as main did) and "
                             "side by side (one batch), this tree only")
    args = parser.parse_args()
    if args.trickle:
        modes = {"one after the other": "sequential", "side by side": "together"}
        ends: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
        for _ in range(args.repeats):
            for name, mode in modes.items():
                ends[name].append(once(args.replies, None, mode))
        for name, results in ends.items():
            per = {k: statistics.median(r[k] for r in results) / args.replies * 1e6 for k in ("cpu", "loop", "wall")}
            print(f"{name:>20}: {per['cpu']:6.0f} us CPU per reply's end (loop thread {per['loop']:5.0f}), "
                  f"wall {per['wall']:6.0f} us; load {os.getloadavg()[0]:.2f}")
        return
    trees = [("this tree", None)] + ([("--src", args.src)] if args.src else [])
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in trees}
    for _ in range(args.repeats):
        for name, src in trees:
            runs[name].append(once(args.replies, src))
    for name, results in runs.items():
        per = {k: statistics.median(r[k] for r in results) / args.replies * 1e6 for k in ("cpu", "loop", "wall")}
        print(f"{name:>10}: {per['cpu']:7.0f} us CPU per reply (loop thread {per['loop']:6.0f}), "
              f"wall {per['wall']:6.0f} us per reply; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
