"""When the person sees a reply's first text and its final screen, on Telegram's budgets (run by hand).

    .venv/bin/python bench/bench_first_and_final.py

Virtual clock, reference platform, the real delivery core; seconds are the
person's, not CPU. Two sweeps:

* **group end** (20/min less 5%, burst 3): replies of 1,000-12,000
  characters over 15 s; seconds from the last chunk to the final screen,
  with previews spending the burst ("before") and keeping
  ``min(burst - 1, 2)`` tokens for the end (``pacing.PREVIEW_RESERVE``).
* **private first text** (1 call per 1.05 s, burst 1, typing charged): the
  first words come after 0-10 s of silence, streamed (20 words at 30/s) or
  in one lump (5 words); for each typing design, how often the first text
  comes more than 0.5 s after ``min_tokens``, and the seconds with no
  activity on screen before it (neither text nor Telegram's typing
  indicator, which shows 5 s or until a message arrives).
"""

from __future__ import annotations

import asyncio
import statistics

from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.delivery import Delivery, DeliveryPolicy, pacing
from hermes_gateway.testing import ReferencePlatform, reassemble, run_virtual

GROUP = RateBudget(rate=19 / 60, burst=3)
PRIVATE = RateBudget(rate=1 / 1.05, burst=1)


def delivery(ref: ReferencePlatform, policy: DeliveryPolicy | None = None) -> Delivery:
    return Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref]), policy=policy)


def words(text: str) -> list[str]:
    return [w + " " for w in text.split(" ")[:-1]] + [text.split(" ")[-1]]


def group_reply(size: int, seconds: float = 15.0) -> dict:
    ref = ReferencePlatform("telegram_like", max_message_length=4096, length_unit="utf16",
                            budgets={"default": PRIVATE, "group": GROUP})
    reply = "".join(f"Sentence {i} says something useful about streaming. " for i in range(400))[:size].rstrip()
    deltas = words(reply)
    times: dict[str, float] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        session = delivery(ref).session("telegram_like", "-100", chat_kind="group",
                                        settings=StreamSettings(enabled=True, edit_interval=1.5, min_tokens=20))
        for n, delta in enumerate(deltas):
            session.feed(delta)
            if n + 1 == 20:
                times["min_tokens"] = loop.time()
            await asyncio.sleep(seconds / len(deltas))
        times["last"] = loop.time()
        await session.finish()
        times["final"] = loop.time()

    run_virtual(main())
    chat = ref.chat("-100")
    assert reassemble(chat.screen) == reply
    first = min(c.at for c in chat.calls if c.kind == "send")
    return {"final": times["final"] - times["last"], "first": first - times["min_tokens"],
            "calls": len(chat.calls), "flood": chat.throttled, "unchanged": chat.wasted,
            "updates": sum(1 for c in chat.calls if c.at < times["last"])}


def private_reply(silence: float, delay: float, interval: float, streamed: bool) -> tuple[float, float, int]:
    ref = ReferencePlatform("telegram_like", budgets={"default": PRIVATE})
    min_tokens = 20 if streamed else 5
    times: dict[str, float] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        settings = StreamSettings(enabled=True, edit_interval=1.5, min_tokens=min_tokens, typing_interval=interval)
        session = delivery(ref, DeliveryPolicy(typing_delay=delay)).session(
            "telegram_like", "42", chat_kind="private", settings=settings)
        session.start()
        await asyncio.sleep(silence)
        for n in range(min_tokens):
            session.feed(f"w{n} ")
            if streamed and n + 1 < min_tokens:
                await asyncio.sleep(1 / 30)
        times["min_tokens"] = loop.time()
        for n in range(10):
            await asyncio.sleep(0.05)
            session.feed(f"m{n} ")
        await session.finish()

    run_virtual(main())
    chat = ref.chat("42")
    first = next(c.at for c in chat.calls if c.kind == "send")
    return first - times["min_tokens"], chat.blank_before_first_text(), chat.throttled


def main() -> None:
    sizes = range(1000, 12001, 250)
    print(f"group, {len(sizes)} replies of 1,000-12,000 characters over 15 s (edit_interval 1.5 s, min_tokens 20)")
    print(f"  {'previews':26s} {'final after last chunk: median':>31s} {'worst':>6s} {'> 1 s':>6s} "
          f"{'first text':>10s} {'updates':>8s} {'calls':>6s} {'429s':>5s} {'no-op':>5s}")
    original = pacing.PREVIEW_RESERVE
    for name, reserve in (("spend the burst (before)", 0), (f"keep {original} for the end", original)):
        pacing.PREVIEW_RESERVE = reserve
        rows = [group_reply(size) for size in sizes]
        finals = [r["final"] for r in rows]
        print(f"  {name:26s} {statistics.median(finals):30.2f}s {max(finals):5.2f}s "
              f"{sum(f > 1.0 for f in finals):6d} {max(r['first'] for r in rows):9.2f}s "
              f"{statistics.mean(r['updates'] for r in rows):8.1f} {sum(r['calls'] for r in rows):6d} "
              f"{sum(r['flood'] for r in rows):5d} {sum(r['unchanged'] for r in rows):5d}")
    pacing.PREVIEW_RESERVE = original

    silences = [n * 0.05 for n in range(201)]
    designs = {"typing at 1.0 s (today)": (1.0, 4.5), "typing at once": (0.0, 4.5), "typing at 2.0 s": (2.0, 4.5),
               "typing at 3.0 s": (3.0, 4.5), "refresh every 5.0 s": (1.0, 5.0),
               "no typing before text": (1e9, 4.5)}
    print(f"private, first words after {len(silences)} silences of 0-10 s: first text > 0.5 s after min_tokens "
          "(worst wait) / seconds with no activity shown (mean, worst)")
    for streamed in (False, True):
        print(f"  {'streamed: 20 words at 30/s' if streamed else 'one lump of 5 words'}")
        for name, (delay, interval) in designs.items():
            rows = [private_reply(s, delay, interval, streamed) for s in silences]
            late = sum(wait > 0.5 + 1e-9 for wait, _, _ in rows)
            print(f"    {name:26s} late {late:3d}/{len(rows)} (worst {max(r[0] for r in rows):.2f} s)   "
                  f"no activity {statistics.mean(r[1] for r in rows):.2f} s, worst {max(r[1] for r in rows):.2f} s"
                  f"   429s {sum(r[2] for r in rows)}")


if __name__ == "__main__":
    main()
