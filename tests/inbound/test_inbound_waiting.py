"""Messages waiting in a chat's queue are kept in the store while they wait (:mod:`hermes_gateway._core.inbound.waiting`).

What a crash leaves is checked end to end in ``plugins/telegram/tests/test_telegram_crash_recovery.py``
(SIGKILL with a message waiting: the restart tells the person); here, the records themselves.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_gateway import Incoming, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import MemoryStore
from hermes_gateway._core.store.base import ReplyInFlight
from hermes_gateway.testing import ReferencePlatform, eventually

LONG = " ".join(f"w{i}" for i in range(120))


class CountingStore(MemoryStore):
    """A memory store that remembers every record of a reply in flight it was given, by id."""

    def __init__(self) -> None:
        super().__init__()
        self.begun: dict[str, list[str]] = {}

    async def begin_reply(self, reply: ReplyInFlight) -> None:
        self.begun.setdefault(reply.id, []).append(reply.text)
        await super().begin_reply(reply)


def gateway(ref: ReferencePlatform, store: Any, **conversation: Any) -> Gateway:
    data = {"model": {"demo": {"tokens_per_second": 60}},
            "streaming": {"reference": {"enabled": True, "edit_interval": 0.1, "min_tokens": 1}},
            "platforms": {"reference": {"enabled": True}}, "conversation": conversation}
    g = Gateway(parse_config(data, env={}), make_plugins(builtins=(), load_entry_points=False, extra=[ref]))
    g.store = store
    return g


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)})


def say(g: Gateway, text: str, n: int) -> "asyncio.Future[Any]":
    return g.receive(Incoming("reference", "1", text, message_id=f"m{n}", update_id=f"u{n}"))


async def waiting_texts(store: Any) -> list[str]:
    return [r.text for r in await store.replies_in_flight() if not r.shown and r.text != f"echo: {LONG}"]


def written(store: CountingStore, text: str) -> bool:
    """A record of ``text`` was given to the store (``eventually`` takes a plain condition)."""
    return any(text in texts for texts in store.begun.values())


async def test_messages_waiting_behind_a_reply_are_kept_until_their_turn_and_then_cleared():
    ref, store = reference(), CountingStore()
    async with gateway(ref, store) as g:
        first = say(g, f"echo: {LONG}", 1)
        await eventually(lambda: ref.chat("1").screen, lambda: ref.chat("1").screen)
        second, third = say(g, "echo: two", 2), say(g, "echo: three", 3)  # they wait, as one turn
        await eventually(lambda: written(store, "echo: two\n\necho: three"), lambda: store.begun)
        assert await waiting_texts(store) == ["echo: two\n\necho: three"]
        await asyncio.gather(first, second, third)
        assert ref.chat("1").screen == [LONG, "two\n\necho: three"]  # (the demo echoes the turn's text)
        assert await store.replies_in_flight() == []  # each record went: the waiting one and both replies'
    # the waiting turn's record: written when it waited, again when a message joined it (then its reply's own)
    assert sorted(store.begun.values()) == sorted([[f"echo: {LONG}"], ["echo: two", "echo: two\n\necho: three"],
                                                   ["echo: two\n\necho: three"]])


async def test_a_message_into_an_idle_chat_writes_no_record_of_waiting():
    ref, store = reference(), CountingStore()
    async with gateway(ref, store) as g:
        await say(g, "echo: alone", 1)
    assert ref.chat("1").screen == ["alone"]
    assert len(store.begun) == 1  # the reply's own record of its progress, nothing more


async def test_a_waiting_message_dropped_by_stop_leaves_no_record():
    ref, store = reference(), CountingStore()
    async with gateway(ref, store) as g:
        first = say(g, f"echo: {LONG}", 1)
        await eventually(lambda: ref.chat("1").screen, lambda: ref.chat("1").screen)
        queued = say(g, "echo: never mind", 2)
        await eventually(lambda: written(store, "echo: never mind"), lambda: store.begun)
        assert await waiting_texts(store) == ["echo: never mind"]
        await say(g, "/stop", 3)
        assert await asyncio.gather(first, queued) is not None
        await eventually(lambda: g.inbound.waiting.pending == set(), lambda: g.inbound.waiting.pending)
        assert await store.replies_in_flight() == []
    assert "never mind" not in " ".join(ref.chat("1").screen)


class StuckClearingStore(CountingStore):
    """Clearing the first record of waiting hangs until told (a store that stopped answering just then)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def end_reply(self, reply_id: str) -> None:
        first = next((rid for rid, texts in self.begun.items() if texts[0] == "echo: two"), None)
        if reply_id == first:
            await self.release.wait()
        await super().end_reply(reply_id)


async def test_a_store_that_does_not_clear_the_record_does_not_hold_the_waiting_turn_back():
    """The turn waits a bounded moment for its record to go (``CLEAR_WAIT``), then runs: a slow store delays a
    reply, never stops it."""
    ref, store = reference(), StuckClearingStore()
    async with gateway(ref, store) as g:
        first = say(g, f"echo: {LONG}", 1)
        await eventually(lambda: ref.chat("1").screen, lambda: ref.chat("1").screen)
        second = say(g, "echo: two", 2)
        await asyncio.gather(first, second)
        assert ref.chat("1").screen == [LONG, "two"]
        store.release.set()
