"""A long reply in a Telegram-like group: paced inside 20 calls/min, burst 3, with no 429 at all."""

from __future__ import annotations

import asyncio

from delivery_helpers import make_delivery, words

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway._core.delivery.measure import utf16_length
from hermes_gateway.testing import ReferencePlatform, reassemble, run_virtual

GROUP = RateBudget(rate=20 / 60, burst=3)
PACING = 1 / GROUP.rate  # one call every 3 s once the burst is spent


def test_a_5000_character_reply_over_15_seconds_meets_no_429():
    ref = ReferencePlatform("telegram_like", max_message_length=4096, length_unit="utf16",
                            budgets={"default": RateBudget(1.0, 1), "group": GROUP})
    sentences = [f"Sentence {i} says something useful about streaming. " for i in range(100)]
    reply = "".join(sentences)[:5000].rstrip()
    assert len(reply) >= 4990
    deltas = words(reply)
    times = {}

    async def main():
        loop = asyncio.get_running_loop()
        session = make_delivery(ref).session("telegram_like", "-100", chat_kind="group",
                                             settings=StreamSettings(enabled=True, edit_interval=1.5, min_tokens=20))
        for d in deltas:
            session.feed(d)
            await asyncio.sleep(15 / len(deltas))
        times["last_delta"] = loop.time()
        report = await session.finish()
        times["done"] = loop.time()
        return report

    report = run_virtual(main())
    chat = ref.chat("-100")
    assert chat.throttled == 0 and chat.violations == []
    assert reassemble(chat.screen) == reply
    assert len(chat.screen) == 2 and all(utf16_length(m) <= 4096 for m in chat.screen)
    assert times["done"] - times["last_delta"] <= PACING + 0.01
    assert chat.wasted == 0
    assert report.rate_limited == 0
    sent_texts = [(c.message_id, c.text) for c in chat.calls if c.kind in ("send", "edit")]
    assert len(sent_texts) == len(set(sent_texts)), "no call repeats text a message already shows"
