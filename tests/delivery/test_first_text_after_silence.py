"""A private chat (1 call/s, burst 1) whose model is silent before its first words.

Typing is charged to the chat (Telegram counts ``sendChatAction`` against a
chat's flood limit), so a typing call takes the chat's only token for ~1 s.
Streamed first words reach ``min_tokens`` late enough that the token is back;
only words arriving in one lump right after a typing call wait for it.
"""

from __future__ import annotations

import asyncio

from delivery_helpers import make_delivery

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import ReferencePlatform, run_virtual

PRIVATE = RateBudget(rate=1 / 1.05, burst=1)  # a Telegram private chat, as the plugin declares it


def reply_after(silence: float, min_tokens: int, gap: float) -> tuple[ReferencePlatform, float]:
    """Words come after ``silence`` s, ``gap`` s apart; returns the platform and when ``min_tokens`` was reached."""
    ref = ReferencePlatform("telegram_like", budgets={"default": PRIVATE})
    reached = {}

    async def main():
        loop = asyncio.get_running_loop()
        settings = StreamSettings(enabled=True, edit_interval=1.5, min_tokens=min_tokens)
        session = make_delivery(ref).session("telegram_like", "42", chat_kind="private", settings=settings)
        session.start()
        await asyncio.sleep(silence)
        for n in range(min_tokens + 10):
            session.feed(f"word{n} ")
            if n + 1 == min_tokens:
                reached["min_tokens"] = loop.time()
            if gap and n + 1 < min_tokens + 10:
                await asyncio.sleep(gap)
        await asyncio.sleep(0.5)
        return await session.finish()

    report = run_virtual(main())
    assert report.delivered
    return ref, reached["min_tokens"]


def no_activity(ref: ReferencePlatform) -> float:
    """Seconds before the first text with neither text nor typing on screen (typing shows 5 s)."""
    return ref.chat("42").blank_before_first_text()


def test_streamed_first_words_show_within_half_a_second_of_min_tokens_after_any_silence():
    for tenth in range(0, 80, 3):  # silent 0 .. 7.8 s: across the first typing call and its refresh
        silence = tenth / 10
        ref, reached = reply_after(silence, min_tokens=20, gap=1 / 30)
        chat = ref.chat("42")
        first = next(c.at for c in chat.calls if c.kind == "send")
        assert first - reached <= 0.5, silence
        assert no_activity(ref) <= 1.0 + 20 / 30, silence  # typing by ~1 s, or the words already streaming
        assert chat.throttled == 0 and chat.violations == [], silence


def test_a_lump_of_words_just_after_a_typing_call_waits_for_the_chats_token():
    # the limit of a burst-1 budget with typing charged (documented in docs/plugins.md)
    ref, reached = reply_after(1.2, min_tokens=5, gap=0.0)
    calls = ref.chat("42").calls
    typing = [c.at for c in calls if c.kind == "typing"]
    first = next(c.at for c in calls if c.kind == "send")
    assert typing == [1.0]
    assert abs(first - (1.0 + 1.05)) < 0.01, "the first text goes out as soon as the token is back"
    assert ref.chat("42").throttled == 0 and ref.chat("42").violations == []
