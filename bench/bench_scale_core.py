"""The delivery core alone with N replies at once under a saturated bot budget (virtual time; run by hand).

    .venv/bin/python bench/bench_scale_core.py [--chats 1000] [--words 300] [--tps 20]

``bench/scale.py`` runs the whole gateway on real sockets, where the machine's load moves every figure.
This runs only the delivery core, on a virtual-time loop (waits cost nothing; only CPU counts), into the
in-memory reference platform declaring and enforcing Telegram's budgets (1 call per 1.05 s per private
chat; 30 calls/s, burst 30, for the bot): N sessions fed ``--words`` deltas each at ``--tps`` deltas per
second of virtual time, all at once, then all finished at once. Deterministic (the same calls every run).

Reported: CPU per delta while the replies stream, CPU of the core per platform call after every model
has finished (the finals' phase, where work that grows with the number of chats shows), 429s (per chat
and bot-wide), the virtual seconds from the last token to each final text (p50/p99/max), and previews
made while a final text waited.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway.testing import ReferencePlatform, run_virtual

try:
    from hermes_gateway._core.delivery import Delivery
except ImportError:  # pragma: no cover  (an older tree)
    from hermes_gateway.delivery import Delivery  # type: ignore[no-redef]

PRIVATE = RateBudget(rate=1 / 1.05, burst=1)
BOT = RateBudget(rate=30.0, burst=30)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


async def scenario(chats: int, words: int, tps: float) -> dict[str, float]:
    ref = ReferencePlatform(max_message_length=4096, budgets={"default": PRIVATE}, bot_budget=BOT)
    delivery = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref]))
    settings = StreamSettings(True, 1.5, 20)
    sessions = [delivery.session("reference", f"c{n}", settings=settings) for n in range(chats)]
    loop = asyncio.get_running_loop()
    text = [f"w{i % 97} " for i in range(words)]

    async def feed(session) -> None:  # type: ignore[no-untyped-def]
        for word in text:
            session.feed(word)
            await asyncio.sleep(1 / tps)

    cpu0 = time.process_time()
    await asyncio.gather(*(feed(s) for s in sessions))
    cpu_stream = time.process_time() - cpu0
    calls_before = sum(len(ref.chat(f"c{n}").calls) for n in range(chats))
    last_token = loop.time()
    cpu1 = time.process_time()
    finals: dict[str, float] = {}

    async def finish(n: int) -> None:
        await sessions[n].finish()
        finals[f"c{n}"] = loop.time()

    await asyncio.gather(*(finish(n) for n in range(chats)))
    cpu_after = time.process_time() - cpu1
    records = [ref.chat(f"c{n}") for n in range(chats)]
    calls = sum(len(r.calls) for r in records)
    after = calls - calls_before
    waits = [t - last_token for t in finals.values()]
    # previews (calls of a growing reply, with cursor) made after the last token while some final waited
    previews_after = sum(1 for r in records for c in r.calls
                         if c.at > last_token and c.kind in ("send", "edit") and "▌" in c.text)
    return {
        "chats": chats, "calls": calls, "429s": sum(r.throttled for r in records),
        "bot-wide 429s": ref.bot_throttled, "violations": sum(len(r.violations) for r in records),
        "us CPU per delta (streaming)": cpu_stream / (chats * words) * 1e6,
        "calls after the last token": after,
        "ms CPU per call after the last token": cpu_after / max(after, 1) * 1e3,
        "final after the last token p50 (s)": pct(waits, 50), "p99 (s)": pct(waits, 99), "max (s)": max(waits),
        "previews after the last token": previews_after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--tps", type=float, default=20.0)
    args = parser.parse_args()
    result = run_virtual(scenario(args.chats, args.words, args.tps))
    for key, value in result.items():
        print(f"{key:>38}: {value:.3f}" if isinstance(value, float) else f"{key:>38}: {value}")


if __name__ == "__main__":
    main()
