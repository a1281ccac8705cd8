"""The typing indicator: kept alive while nothing visible happens, never in the way of the first text."""

from __future__ import annotations

import asyncio

from delivery_helpers import feed_over, make_delivery, words

from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery
from hermes_gateway.testing import ReferencePlatform, run_virtual

PRIVATE = {"default": RateBudget(rate=1.0, burst=1)}  # a Telegram private chat
REPLY = ("The quick brown fox jumps over the lazy dog. " * 3).strip()


def settings(enabled=True, min_tokens=1, typing_interval=4.5) -> StreamSettings:
    return StreamSettings(enabled=enabled, edit_interval=1.0, min_tokens=min_tokens, typing_interval=typing_interval)


def typing_times(ref: ReferencePlatform, chat: str = "c") -> list[float]:
    return [c.at for c in ref.chat(chat).calls if c.kind == "typing"]


def test_a_15_second_reply_without_previews_shows_typing_about_every_4_5_seconds():
    ref = ReferencePlatform(budgets=PRIVATE)

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=settings(enabled=False))
        await feed_over(session, words(REPLY), 15)
        return await session.finish()

    report = run_virtual(main())
    times = typing_times(ref)
    assert report.delivered and ref.chat("c").screen == [REPLY]
    assert len(times) == 4 and times[0] <= 1.0
    assert all(abs((b - a) - 4.5) < 0.01 for a, b in zip(times, times[1:]))
    assert ref.chat("c").throttled == 0 and ref.chat("c").violations == []


def test_the_first_text_is_not_held_back_behind_a_typing_call():
    ref = ReferencePlatform(budgets=PRIVATE)
    reached = {}

    async def main():
        loop = asyncio.get_running_loop()
        session = make_delivery(ref).session("reference", "c", settings=settings(min_tokens=3))
        for n, w in enumerate(words(REPLY)):
            session.feed(w)
            if n + 1 == 3:
                reached["min_tokens"] = loop.time()
            await asyncio.sleep(0.1)
        return await session.finish()

    run_virtual(main())
    calls = ref.chat("c").calls
    first_send = next(c for c in calls if c.kind == "send")
    assert abs(first_send.at - reached["min_tokens"]) < 1e-6, "sent the moment min_tokens is reached"
    assert typing_times(ref) == [], "text within the first moment needs no typing indicator"


def test_typing_while_the_model_thinks_then_the_first_text_at_once():
    ref = ReferencePlatform(budgets=PRIVATE)
    reached = {}

    async def main():
        loop = asyncio.get_running_loop()
        session = make_delivery(ref).session("reference", "c", settings=settings(min_tokens=5))
        session.feed("<think>weighing the options")
        await asyncio.sleep(5.45)  # thinking: nothing visible
        session.feed("</think>")
        for n, w in enumerate(words(REPLY)):
            session.feed(w)
            if n + 1 == 5:
                reached["min_tokens"] = loop.time()
            await asyncio.sleep(0.1)
        return await session.finish(REPLY)

    run_virtual(main())
    times = typing_times(ref)
    first_send = next(c for c in ref.chat("c").calls if c.kind == "send")
    assert times == [1.0], "typing while thinking; skipped at 5.5 s, when text was already arriving"
    assert abs(first_send.at - reached["min_tokens"]) < 1e-6
    assert ref.chat("c").screen == [REPLY]


def test_typing_is_refreshed_while_a_tool_runs_and_not_while_text_streams():
    ref = ReferencePlatform(budgets=PRIVATE)

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=settings())
        await feed_over(session, words("Let me look that up."), 2)
        session.tool_started("search")
        await asyncio.sleep(12)
        session.tool_finished("search")
        await feed_over(session, words(REPLY), 10)
        return await session.finish("Let me look that up. " + REPLY)

    run_virtual(main())
    times = typing_times(ref)
    assert len(times) >= 2 and all(2 < t < 14.5 for t in times), times
    assert all(abs((b - a) - 4.5) < 0.01 for a, b in zip(times, times[1:]))
    assert any("🔧 search…" in t for t in ref.chat("c").messages[0].history)
    # typing is charged to the chat's budget: previews and typing together never met a 429
    assert ref.chat("c").throttled == 0 and ref.chat("c").violations == []


def test_the_typing_interval_comes_from_the_conversation_config():
    ref = ReferencePlatform(budgets=PRIVATE)
    config = parse_config({"conversation": {"typing_interval": 2}, "streaming": {"enabled": False}}, env={})
    delivery = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref]), config)

    async def main():
        session = delivery.session("reference", "c")
        await feed_over(session, words(REPLY), 9)
        return await session.finish()

    run_virtual(main())
    times = typing_times(ref)
    assert len(times) >= 4 and all(abs((b - a) - 2.0) < 0.01 for a, b in zip(times, times[1:]))
