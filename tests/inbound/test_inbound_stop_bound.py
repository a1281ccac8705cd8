"""Stopping within a bound: after ``shutdown_grace`` every running reply is cut within seconds, whatever it does.

Each test stops a gateway while a reply is busy in a way that used to keep
the stop waiting (a long split, a long 429, a platform call that never
answers, a store that never answers) and checks, on the virtual clock, that
``Gateway.stop`` returns within ``grace + 5`` seconds and that what the
person sees has no cursor.
"""

from __future__ import annotations

import asyncio

from hermes_gateway import RateBudget, hookimpl
from hermes_gateway.testing import Fault, ReferencePlatform, run_virtual
from inbound_helpers import CURSOR, People, make_gateway, reference

GRACE = 2.0
BOUND = GRACE + 5.0


def long_text(chars: int) -> str:
    words, size, i = [], 0, 0
    while size < chars:
        word = f"w{i}"
        words.append(word)
        size += len(word) + 1
        i += 1
    return " ".join(words)


async def stop_timed(gateway) -> float:
    loop = asyncio.get_running_loop()
    started = loop.time()
    await gateway.stop()
    return loop.time() - started


def test_a_long_split_is_cut_within_the_bound_and_keeps_what_was_sent():
    """200,000 characters at one message a second: the stop sends no more of them and ends at once."""
    ref = reference(budgets={"default": RateBudget(rate=1.0, burst=1)})
    text = long_text(200_000)

    async def main():
        gateway = make_gateway(ref, tokens_per_second=0, grace=GRACE)
        await gateway.start()
        reply = People(gateway).say("1", "echo: " + text)
        await asyncio.sleep(5)  # a few of its ~50 messages are out
        took = await stop_timed(gateway)
        report = await reply
        assert took <= BOUND, f"stopping took {took:.1f}s"
        assert report.interrupted
        screen = ref.chat("1").screen
        assert 1 <= len(screen) < 20, len(screen)
        assert not any(CURSOR in message for message in screen)
        assert text.startswith(screen[0]) and all(message in text for message in screen), "what was sent stays"
        assert ref.chat("1").violations == []
    run_virtual(main())


def test_a_reply_waiting_out_a_long_429_is_cut_within_the_bound():
    ref = reference()

    async def main():
        gateway = make_gateway(ref, tokens_per_second=4, grace=GRACE)
        await gateway.start()
        reply = People(gateway).say("1", "echo: " + long_text(400))
        await asyncio.sleep(1.0)  # the first preview is on screen
        ref.chat("1").fail_next(Fault.rate_limited(600), times=1)
        await asyncio.sleep(1.0)  # ... and the next edit was told to wait ten minutes
        took = await stop_timed(gateway)
        assert took <= BOUND, f"stopping took {took:.1f}s"
        assert (await reply).interrupted
        assert any(call.outcome == "rate_limited" for call in ref.chat("1").calls)
        assert ref.chat("1").violations == []
    run_virtual(main())


class HangingPlatform(ReferencePlatform):
    """A platform whose calls stop answering once ``hang`` is set (a socket that went silent)."""

    def __init__(self, **kw) -> None:
        kw.setdefault("budgets", {"default": RateBudget(rate=50, burst=10)})
        super().__init__("reference", **kw)
        self.hang = False
        self.hung_calls = 0

    async def _maybe_hang(self) -> None:
        if self.hang:
            self.hung_calls += 1
            await asyncio.Event().wait()

    @hookimpl
    async def on_delta(self, stream, message, text):
        await self._maybe_hang()
        return await super().on_delta(stream, message, text)

    @hookimpl
    async def on_stream_end(self, stream, message, text):
        await self._maybe_hang()
        return await super().on_stream_end(stream, message, text)


def test_a_platform_call_that_never_answers_does_not_hold_the_stop():
    ref = HangingPlatform()

    async def main():
        gateway = make_gateway(ref, tokens_per_second=4, grace=GRACE)
        await gateway.start()
        reply = People(gateway).say("1", "echo: " + long_text(400))
        await asyncio.sleep(1.0)
        assert ref.chat("1").screen, "a preview is on screen"
        ref.hang = True
        await asyncio.sleep(1.0)
        took = await stop_timed(gateway)
        assert took <= BOUND, f"stopping took {took:.1f}s"
        report = await reply
        assert report.interrupted and ref.hung_calls >= 1
        assert report.stuck, "the message that could not be ended is reported"
    run_virtual(main())


def test_a_reply_that_is_cut_before_the_hang_loses_its_cursor():
    """The calls answer again after the cut: the message on screen ends without its cursor."""
    ref = reference()

    async def main():
        gateway = make_gateway(ref, tokens_per_second=2, grace=GRACE)
        await gateway.start()
        reply = People(gateway).say("1", "echo: " + long_text(400))
        await asyncio.sleep(2.0)
        took = await stop_timed(gateway)
        assert took <= BOUND
        assert (await reply).interrupted
        [shown] = ref.chat("1").screen
        assert CURSOR not in shown and long_text(400).startswith(shown)
    run_virtual(main())


class HangingStore:
    """A conversation store whose writes never answer (a locked database, a dead network disk)."""

    def __init__(self, store) -> None:
        self._store = store
        self.answers = asyncio.Event()  # set at the end of the test: the disk comes back

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def record_turn(self, key, turn):
        await self.answers.wait()


def test_a_store_that_never_answers_does_not_hold_the_stop():
    ref = reference()

    async def main():
        gateway = make_gateway(ref, tokens_per_second=2, grace=GRACE)
        store = gateway.store = HangingStore(gateway.store)
        await gateway.start()
        People(gateway).say("1", "echo: " + long_text(400))
        await asyncio.sleep(2.0)
        took = await stop_timed(gateway)
        assert took <= BOUND, f"stopping took {took:.1f}s"
        [shown] = ref.chat("1").screen
        assert CURSOR not in shown
        store.answers.set()
        await asyncio.sleep(0)
    run_virtual(main())
