"""A 429 stops exactly the calls it covers: one chat (scope "chat") or every chat of the bot (scope "bot")."""

from __future__ import annotations

import asyncio

from delivery_helpers import feed_over, make_delivery, streaming, words

from hermes_gateway import RateBudget, RateLimited
from hermes_gateway.testing import Fault, ReferencePlatform, run_virtual

REPLY = ("The quick brown fox jumps over the lazy dog. " * 4).strip()
FAST = {"default": RateBudget(rate=20.0, burst=5)}


def two_chats(ref: ReferencePlatform, inject, at: float = 2.0):
    """Stream REPLY into chats a and b at once; ``inject()`` at ``at`` seconds; returns when both are done."""
    async def main():
        delivery = make_delivery(ref)
        a = delivery.session("reference", "a", settings=streaming(edit_interval=0.5))
        b = delivery.session("reference", "b", settings=streaming(edit_interval=0.5))

        async def injector():
            await asyncio.sleep(at)
            inject()

        await asyncio.gather(feed_over(a, words(REPLY), 8), feed_over(b, words(REPLY), 8), injector())
        return await asyncio.gather(a.finish(), b.finish())
    return run_virtual(main())


def test_a_bot_wide_429_makes_every_chat_wait():
    ref = ReferencePlatform(budgets=FAST)  # no bot_budget declared: a bot-scope 429 still has a budget to block
    reports = two_chats(ref, lambda: ref.fail_bot_next(5.0))
    limited = [c for chat in ("a", "b") for c in ref.chat(chat).calls if c.outcome == "rate_limited"]
    assert len(limited) == 1, "only the call that met the 429; no chat called again before it ended"
    until = limited[0].at + 5.0
    for chat in ("a", "b"):
        assert ref.chat(chat).violations == []
        assert not [c for c in ref.chat(chat).calls if limited[0].at < c.at < until]
        assert ref.chat(chat).screen == [REPLY]
    assert all(r.delivered for r in reports)


def test_a_chat_429_does_not_hold_up_other_chats():
    ref = ReferencePlatform(budgets=FAST)
    two_chats(ref, lambda: ref.chat("a").fail_next(Fault.rate_limited(5.0)))
    limited = next(c for c in ref.chat("a").calls if c.outcome == "rate_limited")
    during = [c for c in ref.chat("b").calls if limited.at < c.at < limited.at + 5.0]
    assert during, "chat b kept streaming while chat a waited"
    assert not [c for c in ref.chat("a").calls if limited.at < c.at < limited.at + 5.0]
    assert ref.chat("a").violations == [] and ref.chat("b").violations == []
    assert ref.chat("a").screen == ref.chat("b").screen == [REPLY]


def test_the_bot_budget_the_reference_enforces_answers_with_a_bot_scope():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=100.0, burst=100)},
                            bot_budget=RateBudget(rate=1.0, burst=1))

    async def main():
        from hermes_gateway._core.platform import Stream
        stream_a = Stream(platform=ref.platform, chat_id="a")
        stream_b = Stream(platform=ref.platform, chat_id="b")
        await ref.on_stream_end(stream_a, None, "one")
        try:
            await ref.on_stream_end(stream_b, None, "two")
        except RateLimited as exc:
            return exc

    exc = run_virtual(main())
    assert isinstance(exc, RateLimited) and exc.scope == "bot" and 0 < exc.retry_after <= 1.01


def test_rate_limited_defaults_to_the_chat_and_refuses_an_unknown_scope():
    import pytest

    assert RateLimited(3).scope == "chat"
    assert RateLimited(3, scope="bot").scope == "bot"
    with pytest.raises(ValueError, match="'chat' or 'bot'"):
        RateLimited(3, scope="guild")  # type: ignore[arg-type]
