"""The bot-wide budget's queue: finals before previews when it is saturated, and no wake-up per waiting reply."""

from __future__ import annotations

import asyncio
import weakref

from delivery_helpers import feed_over, make_delivery, streaming, words

from hermes_gateway import RateBudget
from hermes_gateway._core.delivery.budget import ALL_CHATS
from hermes_gateway._core.delivery.queue import BudgetQueue, queue_of
from hermes_gateway.testing import ReferencePlatform, run_virtual

SHORT = "A short answer that is over quickly, in a few words."
LONG = ("A long answer keeps growing for a while, word by word, so its previews want the bot's budget. " * 6).strip()
CHATS = {"default": RateBudget(rate=10.0, burst=2)}


def test_finals_go_before_other_replies_previews_when_the_bot_budget_is_saturated():
    # 2 calls/s for the whole bot; 6 long replies want ~12 previews a second; 6 short ones end at 2 s
    ref = ReferencePlatform(budgets=CHATS, bot_budget=RateBudget(rate=2.0, burst=2))
    ended: dict[str, float] = {}

    async def main():
        delivery = make_delivery(ref)
        loop = asyncio.get_running_loop()

        async def reply(chat: str, text: str, seconds: float) -> None:
            session = delivery.session("reference", chat, settings=streaming(edit_interval=0.5))
            await feed_over(session, words(text), seconds)
            ended[chat] = loop.time()
            assert (await session.finish()).delivered

        await asyncio.gather(*(reply(f"short{n}", SHORT, 2.0) for n in range(6)),
                             *(reply(f"long{n}", LONG, 30.0) for n in range(6)))
        bot = delivery.budgets.for_chat("reference", ALL_CHATS, ref.platform.bot_budget, loop.time())
        # every grant was spent or given back: a leaked or doubly returned reservation shifts the budget
        assert queue_of(bot).outstanding == 0

    run_virtual(main())
    for n in range(6):
        assert ref.chat(f"short{n}").screen == [SHORT]
        assert ref.chat(f"long{n}").screen == [LONG]
    finals = [ref.chat(f"short{n}").calls[-1].at for n in range(6)]
    last_ended = max(ended[f"short{n}"] for n in range(6))
    previews_meanwhile = [c for n in range(6) for c in ref.chat(f"long{n}").calls
                          if last_ended < c.at < max(finals)]
    assert previews_meanwhile == [], "another reply's preview went while a finished reply's final text waited"
    assert max(finals) - last_ended <= 6 / 2.0 + 0.1, "the six finals took the bot's budget at its rate"
    assert ref.bot_throttled == 0 and all(not ref.chat(c).violations for c in ref.chats)


async def _end_at_once(ref: ReferencePlatform, replies: int, watch=None) -> BudgetQueue:
    """``replies`` short replies into chats of their own, all finished at once; ``watch(bot budget)`` first. Every
    one delivered and every grant spent or given back; the bot budget's queue."""
    delivery = make_delivery(ref)
    sessions = [delivery.session("reference", f"c{n}", settings=streaming(edit_interval=1.0)) for n in range(replies)]
    bot = delivery.budgets.for_chat("reference", ALL_CHATS, ref.platform.bot_budget, 0.0)
    if watch is not None:
        watch(bot)
    for session in sessions:
        session.feed("Hello there.")
    reports = await asyncio.gather(*(s.finish() for s in sessions))
    assert all(r.delivered for r in reports)
    assert queue_of(bot).outstanding == 0
    return queue_of(bot)


def test_replies_waiting_for_the_bot_budget_do_not_wake_for_tokens_they_do_not_get():
    # 200 replies end at once behind 30 calls/s: each call wakes the one reply that makes it, not all 200
    ref = ReferencePlatform(budgets=CHATS, bot_budget=RateBudget(rate=30.0, burst=30))
    looks = 0

    def count_looks(bot) -> None:
        ready_at = bot.ready_at

        def counted(now: float, reserve: float = 0.0) -> float:
            nonlocal looks
            looks += 1
            return ready_at(now, reserve)

        bot.ready_at = counted

    run_virtual(_end_at_once(ref, 200, count_looks))
    calls = sum(len(chat.calls) for chat in ref.chats.values())  # the texts, and a few typing indicators
    assert all(ref.chat(f"c{n}").screen == ["Hello there."] for n in range(200))
    # before the queue: 20,530 looks for 230 calls (every waiting reply woke for every token); after: 631
    assert looks <= 3 * calls, f"the bot's budget was looked at {looks} times for {calls} calls"


def test_withdrawn_waiters_are_not_kept_while_the_queue_stays_busy():
    # A saturated bot budget: a final always waits at the head of the queue, and replies' previews queue
    # behind it and are withdrawn when their replies end. The withdrawn used to stay in the heap until they
    # reached its top, which never happened while anything better waited: a 30-minute soak of 200 chats held
    # ~27,000 of them (+0.2 MB a minute, bench/README.md "3c. Soak").
    async def main():
        from hermes_gateway._core.delivery.budget import ChatBudget
        from hermes_gateway._core.delivery.queue import FINAL, PREVIEW

        loop = asyncio.get_running_loop()
        bot = ChatBudget(RateBudget(rate=1.0, burst=1), tokens=0.0, updated=loop.time())  # the next token in 1 s
        queue = queue_of(bot)
        head = queue.enqueue(FINAL)
        kept = []
        for _ in range(5_000):
            ticket = queue.enqueue(PREVIEW)
            assert queue.withdraw(ticket) is False
            kept.append(weakref.ref(ticket))
            del ticket
        alive = sum(ref() is not None for ref in kept)
        assert alive <= 64, f"{alive} withdrawn waiters still held by the queue"
        assert len(queue) == 1 and not head.done()
        late = queue.enqueue(PREVIEW)  # the queue still serves in order: the head first, then the newest
        assert await head is True and not late.done()
        queue.charged(loop.time())
        assert await late is True

    run_virtual(main())


def test_a_busy_queue_grants_its_tokens_in_groups_that_keep_to_the_budget():
    # 200 replies end at once behind 30 calls/s, burst 30: after the first burst the finals leave in groups of
    # half a second's refill (15), twice a second, so their calls, wake-ups and store writes run together
    # (bench/scale.py: 3.4 -> 1.3-1.5 ms of CPU per call after the model's last token); every call still
    # conforms to the bucket when it leaves, and the last final lands when the budget's rate allows.
    ref = ReferencePlatform(budgets=CHATS, bot_budget=RateBudget(rate=30.0, burst=30))
    wakes = run_virtual(_end_at_once(ref, 200)).wakes
    assert all(ref.chat(f"c{n}").screen == ["Hello there."] for n in range(200))
    assert ref.bot_throttled == 0 and all(not ref.chat(c).violations for c in ref.chats)
    texts = sorted(c.at for chat in ref.chats.values() for c in chat.calls if c.text)
    groups: dict[float, int] = {}
    for at in texts:
        groups[round(at, 3)] = groups.get(round(at, 3), 0) + 1
    later = [n for at, n in groups.items() if at > 0.01]
    queued = len(texts) - 30  # the first 30 left at once (the bucket's burst)
    assert max(later) == 15 and len(later) <= queued // 15 + 2, f"the texts after the first burst left as {groups}"
    assert wakes <= queued // 15 + 3, f"the queue's timer fired {wakes} times for {queued} queued texts"
    assert texts[-1] <= queued / 30.0 + 0.01, "grouping cost the budget's rate"


def test_a_lone_waiter_gets_the_next_token_without_waiting_for_a_group():
    async def main():
        from hermes_gateway._core.delivery.budget import ChatBudget
        from hermes_gateway._core.delivery.queue import FINAL

        loop = asyncio.get_running_loop()
        start = loop.time()
        bot = ChatBudget(RateBudget(rate=30.0, burst=30), tokens=0.0, updated=start)  # empty: next token in 1/30 s
        ticket = queue_of(bot).enqueue(FINAL)
        assert await ticket is True
        assert loop.time() - start <= 1 / 30 + 0.005

    run_virtual(main())
