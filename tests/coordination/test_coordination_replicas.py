"""Two replicas of one bot (two ``Gateway`` objects, one Redis, one chat screen): what a person sees."""

from __future__ import annotations

import asyncio

from hermes_gateway import RateBudget
from hermes_gateway._core.store import MemoryStore
from hermes_gateway.testing import Fault, eventually
from coordination_helpers import CURSOR, Webhooks, calls_into_a_block, reference, replica

#: A grant from the shared budget and the call it allows are apart by the replica's own latency; the grant
#: has a margin for it (5% of a token's time, at most 50 ms), but on a machine shared with other jobs a pause
#: longer than that can let the strict reference platform count two calls a hair too close. One such 429 is
#: the core's ordinary business (it waits it out); more would mean the replicas do not share the budget.
STRAY = 1


async def test_the_same_update_delivered_to_both_replicas_is_answered_once(redis_url):
    ref = reference()
    async with replica(ref, redis_url) as a, replica(ref, redis_url) as b:
        hooks = Webhooks(a, b)
        first = hooks.deliver(0, "1", "echo: hello there", update_id="upd-7")
        again = hooks.deliver(1, "1", "echo: hello there", update_id="upd-7")  # retried to the other replica
        reports = [r for r in await asyncio.gather(first, again) if r is not None]
        assert len(reports) == 1 and reports[0].delivered  # whichever replica got it first answers
        late = [hooks.deliver(i, "1", "echo: hello there", update_id="upd-7") for i in (0, 1)]  # much later
        assert await asyncio.gather(*late) == [None, None]
        assert a.coordination.dedupe_hits + b.coordination.dedupe_hits == 1  # the later ones: each replica's memory
    assert ref.chat("1").screen == ["hello there"]


async def test_replies_in_two_topics_of_one_chat_share_its_budget_and_a_429_stops_both_replicas(redis_url):
    # one chat, two topics: two lanes (one per replica) stream at once, into one budget of 4 calls/s
    strict = RateBudget(rate=4, burst=2)
    ref = reference(budgets={"default": strict})
    async with replica(ref, redis_url, tokens_per_second=8) as a, replica(ref, redis_url, tokens_per_second=8) as b:
        hooks = Webhooks(a, b)
        words = " ".join(f"w{i}" for i in range(24))
        first = hooks.deliver(0, "1", f"echo: {words}", thread_id="t1")
        second = hooks.deliver(1, "1", f"echo: {words}", thread_id="t2")
        await asyncio.sleep(1.5)  # both stream, the shared bucket drained
        ref.chat("1").fail_next(Fault.rate_limited(1.5))  # whichever replica calls next gets the 429
        reports = await asyncio.gather(first, second)
    chat = ref.chat("1")
    assert all(r.delivered for r in reports)
    assert chat.screen == [words, words]
    # no call while the 429 blocked the chat (the other replica waited too), but one already in flight
    in_flight, ignoring = calls_into_a_block(chat.violations, 1.5)
    assert ignoring == [] and len(in_flight) <= STRAY
    # together they kept to 4/s: beside the injected 429, at most one stray one (STRAY), where each alone gets many
    assert chat.throttled - 1 <= STRAY


async def test_replies_in_two_chats_share_the_bot_budget_and_a_bot_wide_429(redis_url):
    ref = reference(budgets={"default": RateBudget(rate=50, burst=10)}, bot_budget=RateBudget(rate=5, burst=2))
    async with replica(ref, redis_url, tokens_per_second=10) as a, replica(ref, redis_url, tokens_per_second=10) as b:
        hooks = Webhooks(a, b)
        words = " ".join(f"w{i}" for i in range(20))
        first, second = hooks.deliver(0, "1", f"echo: {words}"), hooks.deliver(1, "2", f"echo: {words}")
        await asyncio.sleep(1.0)
        ref.fail_bot_next(1.0)
        reports = await asyncio.gather(first, second)
    assert all(r.delivered for r in reports)
    assert ref.chat("1").screen == ref.chat("2").screen == [words]
    # no call while the bot was blocked, but one already in flight when the other replica's 429 came
    in_flight, ignoring = calls_into_a_block(ref.chat("1").violations + ref.chat("2").violations, 1.0)
    assert ignoring == [] and len(in_flight) <= STRAY
    assert ref.bot_throttled <= STRAY  # the platform's own bot-wide limit held (alone, each replica hits it often)


class OneAtATime:
    """Watches the screen: how many replies stream into the chat at once (sent, not yet ended)."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.most = 0

    def __call__(self, chat, call) -> None:
        if call.outcome not in ("ok", "not_modified") or call.kind == "typing":
            return
        if call.hook == "on_stream_end":
            self.open.discard(call.message_id)
        else:
            self.open.add(call.message_id)
        self.most = max(self.most, len(self.open))


async def test_messages_alternating_between_replicas_are_answered_once_in_order_one_at_a_time(redis_url):
    watch = OneAtATime()
    ref = reference(on_call=watch)
    store = MemoryStore()  # the replicas share conversations, as on one PostgreSQL
    async with replica(ref, redis_url, store=store, tokens_per_second=10) as a, \
            replica(ref, redis_url, store=store, tokens_per_second=10) as b:
        hooks = Webhooks(a, b)
        replies = []
        for i in range(6):  # each message arrives while the reply before it is still being written
            replies.append(hooks.deliver(i % 2, "1", f"echo: m{i} " + "word " * 6))
            await eventually(lambda i=i: len(ref.chat("1").screen) == i + 1, lambda: ref.chat("1").screen)
        reports = await asyncio.gather(*replies)
    assert all(r.delivered for r in reports)
    assert ref.chat("1").screen == [f"m{i} " + " ".join(["word"] * 6) for i in range(6)]
    assert watch.most == 1
    assert ref.chat("1").violations == []


async def test_a_burst_of_messages_across_replicas_is_answered_once_oldest_first(redis_url):
    watch = OneAtATime()
    ref = reference(on_call=watch)
    store = MemoryStore()
    async with replica(ref, redis_url, store=store, tokens_per_second=10) as a, \
            replica(ref, redis_url, store=store, tokens_per_second=10) as b:
        hooks = Webhooks(a, b)
        replies = []
        for i in range(8):
            replies.append(hooks.deliver(i % 2, "1", f"echo: m{i} reply"))
            await asyncio.sleep(0.05)
        await asyncio.gather(*replies)
    screen = ref.chat("1").screen
    answered = [int(word[1:]) for text in screen for word in text.replace("echo:", "").split() if word[0] == "m"]
    assert sorted(answered) == list(range(8)), screen  # each message answered exactly once
    firsts = [int(text.split()[0][1:]) for text in screen]
    assert firsts == sorted(firsts), screen  # replies come in the order their first message arrived
    assert watch.most == 1


async def test_a_message_under_busy_interrupt_on_one_replica_stops_the_reply_on_the_other(redis_url):
    ref = reference()
    settings = {"conversation": {"busy": "interrupt"}}
    async with replica(ref, redis_url, tokens_per_second=5, **settings) as a, \
            replica(ref, redis_url, tokens_per_second=5, **settings) as b:
        hooks = Webhooks(a, b)
        long = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
        first = hooks.deliver(0, "1", f"echo: {long}")
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        second = hooks.deliver(1, "1", "echo: stop, answer this")
        assert (await first).interrupted
        assert (await second).delivered
    cut, answer = ref.chat("1").screen
    assert long.startswith(cut) and cut != long and CURSOR not in cut
    assert answer == "stop, answer this"


async def test_stop_on_one_replica_stops_the_reply_on_the_other_and_drops_what_waited(redis_url):
    ref = reference()
    async with replica(ref, redis_url, tokens_per_second=5) as a, replica(ref, redis_url, tokens_per_second=5) as b:
        hooks = Webhooks(a, b)
        long = "one two three four five six seven eight nine ten"
        first = hooks.deliver(0, "1", f"echo: {long}")
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        queued = hooks.deliver(0, "1", "echo: waiting behind it")
        stop = hooks.deliver(1, "1", "/stop")
        assert (await first).interrupted
        assert await queued is None
        assert (await stop).delivered
    cut, stopped = ref.chat("1").screen
    assert long.startswith(cut) and cut != long and CURSOR not in cut
    assert stopped == "⏹ Stopped."


async def test_when_the_replica_holding_a_chat_dies_the_other_answers_after_the_lease_expires(redis_url):
    ref = reference()
    async with replica(ref, redis_url, tokens_per_second=5, lease_ttl=1.0) as a, \
            replica(ref, redis_url, tokens_per_second=5, lease_ttl=1.0) as b:
        hooks = Webhooks(a, b)
        long = "one two three four five six seven eight nine ten"
        dying = hooks.deliver(0, "1", f"echo: {long}", update_id="upd-1")
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        # replica a dies: it never renews nor releases the chat's lease again, and stops writing
        a.coordination.abandon()
        for lane in list(a.inbound.lanes.values()):
            lane.worker.cancel()
        assert await dying is None
        shown = ref.chat("1").screen[0]
        again = hooks.deliver(1, "1", f"echo: {long}", update_id="upd-1")  # its webhook, retried to b
        after = hooks.deliver(1, "1", "echo: are you there?")
        assert await again is None
        assert (await after).delivered
        assert b.coordination.lease_takeovers == 1
    assert ref.chat("1").screen == [shown, "are you there?"]
    assert long.startswith(shown) and shown != long


async def test_a_replica_that_lost_its_lease_while_stalled_stops_its_reply(redis_server, redis_url):
    ref = reference()
    async with replica(ref, redis_url, tokens_per_second=5, lease_ttl=1.0) as a, \
            replica(ref, redis_url, tokens_per_second=5, lease_ttl=1.0) as b:
        hooks = Webhooks(a, b)
        long = "one two three four five six seven eight nine ten eleven twelve"
        stalled = hooks.deliver(0, "1", f"echo: {long}")
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        (lease_key,) = [k for k in a.coordination.lease_keys(("reference", "1", None))[:1]]
        with redis_server.client() as client:
            client.delete(lease_key)  # a's lease ran out while it was stalled (as after a long pause)
        answer = hooks.deliver(1, "1", "echo: taken over")
        assert (await stalled).interrupted  # a saw at its next renewal that the chat is b's, and stopped
        assert (await answer).delivered
        assert b.coordination.lease_takeovers == 1
    cut, taken = ref.chat("1").screen
    assert long.startswith(cut) and cut != long and CURSOR not in cut
    assert taken == "taken over"


async def test_a_replica_stopping_while_its_message_waits_for_the_other_replica_stops_in_its_grace(redis_url):
    ref = reference()
    async with replica(ref, redis_url, tokens_per_second=4) as a:
        b = replica(ref, redis_url, tokens_per_second=4)
        b.shutdown_grace = 0.3
        await b.start()
        hooks = Webhooks(a, b)
        long = " ".join(f"w{i}" for i in range(80))  # 20 s of reply
        running = hooks.deliver(0, "1", f"echo: {long}")
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        waiting = hooks.deliver(1, "1", "echo: behind it")
        await asyncio.wait_for(b.stop(), 10)  # b does not wait for a's reply to end (only a hang fails this)
        assert await waiting is None  # dropped at shutdown, like any message still waiting
        assert not running.done()  # a's reply goes on
        stop = hooks.deliver(0, "1", "/stop")
        assert (await running).interrupted and (await stop).delivered
    cut, stopped = ref.chat("1").screen
    assert long.startswith(cut) and stopped == "⏹ Stopped."
