"""A long Markdown reply streamed into a strict Bot API emulator with Telegram's limits, by hand.

    .venv/bin/python plugins/telegram/bench/bench_telegram_streaming.py [--seconds 15]

A 5,454-character reply (bold words, a list, a link, a code block) is fed
word by word over ``--seconds`` through the real delivery core and the real
plugin (Telegram's own budgets: 1 call/s in a private chat, 20/min in a
group) into the emulator, which answers 429 to anything faster, like
Telegram. For private and group chats it reports: Bot API calls, flood
errors (429), calls that changed nothing ("not modified"), the time from
``min_tokens`` deltas to the first visible text, and from the last chunk to
the exact final screen. "plain" is the plugin as it was (text without
entities), run in the same process right before, for comparison; the
conversion cost per preview is measured in the same run too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from typing import Any, Iterator

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import PlatformRunner
from hermes_telegram import formatting, plugin
from hermes_telegram.emulator import BotApiEmulator

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
SETTINGS = StreamSettings(enabled=True, edit_interval=1.5, min_tokens=20)
LIMITS = {"private": RateBudget(rate=1.0, burst=1), "group": RateBudget(rate=20 / 60, burst=3)}


def reply_text(size: int = 5454) -> str:
    section = ("The **delivery core** paces every call, and this sentence is here to make the reply long. "
               "See [the docs](https://example.org/docs) for *details*.\n\n"
               "- one point\n- another point with `code`\n\n"
               "```python\nfor i in range(3):\n    print(i)\n```\n\n")
    text = ""
    while len(text) < size:
        text += section
    return text[:size].rsplit(" ", 1)[0] + " end."


def telegram(base_url: str, **settings: Any) -> PlatformRunner:
    """The plugin's client with Telegram's real budgets, built as the gateway builds it (not started: no polling)."""
    runner = PlatformRunner(plugin, {"token": TOKEN, "base_url": base_url, **settings}, start=False)
    runner.build()
    return runner


@contextlib.contextmanager
def plain_text() -> Iterator[None]:
    """The plugin as it was before entities: every message sent as typed."""
    original = formatting.render
    formatting.render = lambda text, cursor="": (text, [])  # type: ignore[assignment]
    try:
        yield
    finally:
        formatting.render = original  # type: ignore[assignment]


async def one_reply(kind: str, seconds: float, transport: str = "edit", charge_drafts: bool = True) -> dict[str, Any]:
    reply = reply_text()
    words = reply.split(" ")
    # uncharged drafts: the emulator does not count them either (Telegram does not document it)
    async with BotApiEmulator(TOKEN, rate_limit=LIMITS[kind], drafts_rate_limited=charge_drafts) as api:
        runner = telegram(api.base_url, transport=transport, charge_drafts=charge_drafts)
        delivery = runner.delivery()
        chat_id = "42" if kind == "private" else "-10042"
        session = delivery.session("telegram", chat_id, settings=SETTINGS,
                                   chat_kind="private" if kind == "private" else "supergroup")
        session.start()
        pause = seconds / len(words)
        at_min_tokens = 0.0
        for index, word in enumerate(words):
            session.feed(word if index == len(words) - 1 else word + " ")
            if index + 1 == SETTINGS.min_tokens:
                at_min_tokens = time.monotonic()
            await asyncio.sleep(pause)
        last_chunk = time.monotonic()
        report = await session.finish()
        await runner.client.close()
    chat = api.chat(chat_id)
    texts = [c for c in chat.calls if c.method in ("sendMessage", "editMessageText", "sendMessageDraft")]
    first = next(c.at for c in texts if c.outcome == "ok")
    final = max(c.at for c in chat.calls if c.outcome == "ok")
    return {
        "delivered": report.delivered, "messages": len(chat.screen), "calls": len(chat.calls),
        "flood": len(chat.rate_limited), "unchanged": sum(1 for c in chat.calls if c.outcome == "not_modified"),
        "first": first - at_min_tokens, "final": final - last_chunk, "violations": len(chat.violations),
        "log": [(round(c.at - at_min_tokens, 2), c.method, c.outcome, len(str(c.params.get("text", ""))))
                for c in chat.calls],
    }


def conversion_cost(runs: int = 50) -> tuple[float, float, float]:
    """µs per 4,000-character preview: converted whole (cold), as a growing preview (earlier blocks cached),
    and the ranges a split must not cut (``keep_whole``, asked once per split)."""
    preview = reply_text(4100)[:4000]
    cold, warm, keep = [], [], []
    for run in range(runs):
        started = time.perf_counter()
        formatting.to_entities(preview)
        cold.append(time.perf_counter() - started)
        formatting.convert_blocks(preview[:3950 - run % 7])
        started = time.perf_counter()
        formatting.convert_blocks(preview)
        warm.append(time.perf_counter() - started)
        started = time.perf_counter()
        formatting.keep_whole(preview)
        keep.append(time.perf_counter() - started)
    return statistics.median(cold) * 1e6, statistics.median(warm) * 1e6, statistics.median(keep) * 1e6


async def first_text_after_silence(silence: float, streamed: bool) -> tuple[float, float]:
    """A private reply whose first words come after ``silence`` s: (seconds from ``min_tokens`` to the first
    text, seconds with no activity shown before it).

    Typing is sent about a second into a silent reply (again every 4.5 s) and takes the private chat's only
    token. ``streamed``: the first 20 words come at 30 words/s, as a model streams them (``min_tokens`` 20);
    else 5 words at once (``min_tokens`` 5), the worst case: text in one lump just after a typing call waits
    for the refill (issue 9, point 3). "No activity": neither Telegram's typing indicator (shown 5 s or until
    a message arrives) nor text.
    """
    settings = StreamSettings(enabled=True, edit_interval=1.5, min_tokens=20 if streamed else 5)
    async with BotApiEmulator(TOKEN, rate_limit=LIMITS["private"]) as api:
        runner = telegram(api.base_url)
        delivery = runner.delivery()
        session = delivery.session("telegram", "42", settings=settings, chat_kind="private")
        started = time.monotonic()
        session.start()
        await asyncio.sleep(silence)
        for index in range(settings.min_tokens):
            session.feed(f"word{index} ")
            if streamed and index + 1 < settings.min_tokens:
                await asyncio.sleep(1 / 30)
        at_min_tokens = time.monotonic()
        for index in range(20):
            await asyncio.sleep(0.05)
            session.feed(f"more{index} ")
        await session.finish()
        await runner.client.close()
    calls = api.chat(42).calls
    first = next(c.at for c in calls if c.method == "sendMessage" and c.outcome == "ok")
    shown, until = 0.0, started
    for at in sorted(c.at for c in calls if c.method == "sendChatAction" and c.outcome == "ok" and c.at < first):
        start, end = max(at, until), min(at + 5.0, first)
        shown += max(end - start, 0.0)
        until = max(until, end)
    return first - at_min_tokens, (first - started) - shown


async def main(seconds: float) -> None:
    print(f"reply of {len(reply_text())} characters over {seconds:g} s; edit_interval {SETTINGS.edit_interval} s, "
          f"min_tokens {SETTINGS.min_tokens}; emulator limits private 1/s, group 20/min")
    print(f"{'chat':8s} {'plugin':30s} {'calls':>5s} {'429s':>5s} {'no-op':>5s} {'msgs':>4s} "
          f"{'first text after min_tokens':>28s} {'final after last chunk':>23s}")
    cases = [("private", "plain", "edit", True), ("private", "entities", "edit", True),
             ("private", "entities", "draft", True), ("private", "entities", "draft", False),
             ("group", "plain", "edit", True), ("group", "entities", "edit", True)]
    for kind, name, transport, charged in cases:
        with plain_text() if name == "plain" else contextlib.nullcontext():
            r = await one_reply(kind, seconds, transport, charged)
        assert r["delivered"], r
        label = f"{name}, {transport}s" + ("" if charged else " free")
        print(f"{kind:8s} {label:30s} {r['calls']:5d} {r['flood']:5d} {r['unchanged']:5d} {r['messages']:4d} "
              f"{r['first']:27.2f}s {r['final']:22.2f}s" + (f"  ({r['violations']} early calls)"
                                                             if r["violations"] else ""))
    cold, warm, keep = conversion_cost()
    print(f"Markdown conversion per 4,000-character preview (median): {cold:.0f} µs whole, "
          f"{warm:.0f} µs as a growing preview (earlier blocks cached); "
          f"ranges a split must not cut: {keep:.0f} µs per split")
    print("private chat, first words after a silence: first text after min_tokens / time with no activity shown")
    for streamed in (False, True):
        waits = [(silence, *await first_text_after_silence(silence, streamed))
                 for silence in (0.5, 1.2, 1.6, 3.0, 5.7)]
        print(f"  {'streamed, 20 words at 30/s' if streamed else 'in one lump of 5 words':27s} "
              + ", ".join(f"{silence:g} s silent → {wait:.2f} s / {dark:.2f} s" for silence, wait, dark in waits))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=15.0)
    asyncio.run(main(parser.parse_args().seconds))
