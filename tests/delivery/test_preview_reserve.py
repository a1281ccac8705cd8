"""Previews in a group keep two calls in reserve, so the end of a reply is shown at once.

A Telegram group allows 20 calls a minute with a burst of 3. When a reply's
first message overflows in its last seconds, the end needs two calls (the
first message's final text, then the next message); previews that spent the
burst made the end wait ~3 s per call.
"""

from __future__ import annotations

import asyncio

from delivery_helpers import make_delivery, words

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import ReferencePlatform, reassemble, run_virtual

GROUP = RateBudget(rate=19 / 60, burst=3)      # Telegram's group limit, as the plugin declares it
PRIVATE = RateBudget(rate=1 / 1.05, burst=1)
SETTINGS = StreamSettings(enabled=True, edit_interval=1.5, min_tokens=20)


def long_reply(size: int) -> str:
    sentences = [f"Sentence {i} says something useful about streaming. " for i in range(400)]
    return "".join(sentences)[:size].rstrip()


def stream(size: int, chat_kind: str = "group", seconds: float = 15.0) -> tuple[ReferencePlatform, dict, str]:
    ref = ReferencePlatform("telegram_like", max_message_length=4096, length_unit="utf16",
                            budgets={"default": PRIVATE, "group": GROUP})
    reply = long_reply(size)
    deltas = words(reply)
    times: dict[str, float] = {}

    async def main():
        loop = asyncio.get_running_loop()
        session = make_delivery(ref).session("telegram_like", "-100", chat_kind=chat_kind, settings=SETTINGS)
        for n, delta in enumerate(deltas):
            session.feed(delta)
            if n + 1 == SETTINGS.min_tokens:
                times["min_tokens"] = loop.time()
            await asyncio.sleep(seconds / len(deltas))
        times["last_chunk"] = loop.time()
        report = await session.finish()
        times["final"] = loop.time()
        return report

    report = run_virtual(main())
    assert report.delivered
    return ref, times, reply


def test_a_group_reply_that_overflows_at_the_end_shows_its_final_screen_within_a_second():
    ref, times, reply = stream(4250)  # the first message fills 4096 in the last ~2 s
    chat = ref.chat("-100")
    assert len(chat.screen) == 2 and reassemble(chat.screen) == reply
    assert times["final"] - times["last_chunk"] <= 1.0
    assert chat.throttled == 0 and chat.violations == [] and chat.wasted == 0


def test_group_replies_of_any_length_end_within_a_second_and_show_the_first_text_at_once():
    for size in (800, 3000, 4250, 4500, 8300, 9500, 12000):
        ref, times, reply = stream(size)
        chat = ref.chat("-100")
        first = min(c.at for c in chat.calls if c.kind == "send")
        assert reassemble(chat.screen) == reply, size
        assert first == times["min_tokens"], f"{size}: the first text is never held back by the reserve"
        assert times["final"] - times["last_chunk"] <= 1.0, size
        assert chat.throttled == 0 and chat.violations == [] and chat.wasted == 0, size


def test_group_previews_keep_coming_at_the_budgets_pace():
    ref, times, _ = stream(3000)
    calls = [c.at for c in ref.chat("-100").calls if c.kind in ("send", "edit")]
    during = [at for at in calls if at < times["last_chunk"]]
    # the burst is kept for the end: after the first text, one preview per refill (~3.2 s)
    assert len(during) == 5, calls
    assert max(b - a for a, b in zip(during, during[1:])) < 3.2


def test_a_private_chat_with_burst_1_is_paced_as_before():
    ref, times, reply = stream(3000, chat_kind="private")
    chat = ref.chat("-100")
    previews = [c.at for c in chat.calls if c.kind in ("send", "edit") and c.at < times["last_chunk"]]
    assert reassemble(chat.screen) == reply
    assert len(previews) == 10  # one per edit_interval (1.5 s) over 15 s
    assert chat.throttled == 0 and chat.wasted == 0
