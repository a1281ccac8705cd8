"""The journal and the cursor (issue 26): a crash at any moment leaves no cursor that recovery cannot find.

A message shows the cursor only once the store holds its id, and a
reply's first message is sent only once its record exists. Both are
checked on the reference platform's screen with a store whose writes are
held back, the way a slow disk or a kill between a send and its record
would leave them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_gateway._core.store import MemoryStore
from hermes_gateway._core.store.base import ReplyInFlight, ShownMessage
from hermes_gateway.testing import eventually

from test_recover import CURSOR, gateway, reference


class HeldStore(MemoryStore):
    """A store whose reply records wait until the test lets them through."""

    def __init__(self) -> None:
        super().__init__()
        self.begin_open = asyncio.Event()
        self.updates_open = asyncio.Event()
        self.updates: list[tuple[ShownMessage, ...]] = []

    async def begin_reply(self, reply: ReplyInFlight) -> None:
        await self.begin_open.wait()
        await super().begin_reply(reply)

    async def update_reply(self, reply_id: str, shown: tuple[ShownMessage, ...]) -> None:
        await self.updates_open.wait()
        self.updates.append(shown)
        await super().update_reply(reply_id, shown)


LONG = "echo: " + " ".join(f"w{i}" for i in range(60))


def cursors(screen: list[str]) -> list[str]:
    return [text for text in screen if text.endswith(CURSOR.strip())]


async def test_no_message_is_sent_before_the_reply_is_recorded():
    ref, store = reference(), HeldStore()
    store.updates_open.set()
    async with gateway(ref, store):
        reply = asyncio.ensure_future(ref.say("1", LONG))
        await asyncio.sleep(0.6)  # the demo model streams meanwhile (50 words a second)
        assert ref.chat("1").screen == []
        store.begin_open.set()
        assert (await reply).delivered
    assert ref.chat("1").screen == [LONG.removeprefix("echo: ")]


async def test_a_message_shows_no_cursor_until_the_store_holds_its_id():
    ref, store = reference(), HeldStore()
    store.begin_open.set()
    previews: list[str] = []
    async with gateway(ref, store):
        reply = asyncio.ensure_future(ref.say("1", LONG))
        await eventually(lambda: len([c for c in ref.chat("1").calls if c.outcome == "ok"]) >= 3,
                         lambda: ref.chat("1").calls)
        previews = [c.text for c in ref.chat("1").calls if c.outcome == "ok"]
        # the text grows on screen, and not one of its previews had the cursor: its id is not recorded yet
        assert len(set(previews)) >= 3 and not cursors(previews), previews
        store.updates_open.set()
        await eventually(lambda: cursors([c.text for c in ref.chat("1").calls]), lambda: ref.chat("1").calls)
        assert (await reply).delivered
    assert store.updates, "the record was written"
    assert ref.chat("1").screen == [LONG.removeprefix("echo: ")]


async def test_without_a_store_record_to_wait_for_the_first_preview_has_no_cursor_but_the_next_do():
    ref, store = reference(), MemoryStore()
    async with gateway(ref, store):
        assert (await ref.say("1", LONG)).delivered
    previews = [c.text for c in ref.chat("1").calls if c.hook == "on_delta" and c.outcome == "ok"]
    assert previews and not previews[0].endswith(CURSOR.strip())
    assert any(p.endswith(CURSOR.strip()) for p in previews[1:]), previews


async def test_a_store_that_fails_costs_the_cursor_not_the_reply():
    class Failing(MemoryStore):
        async def begin_reply(self, reply: Any) -> None:
            from hermes_gateway._core.store import StoreError

            raise StoreError("disk full")

    ref = reference()
    async with gateway(ref, Failing()):
        assert (await ref.say("1", LONG)).delivered
    texts = [c.text for c in ref.chat("1").calls if c.outcome == "ok"]
    assert ref.chat("1").screen == [LONG.removeprefix("echo: ")] and not cursors(texts)


class SlowWrites(MemoryStore):
    """A store whose in-flight records take a while to write (a busy disk), and what each message holds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[str, str] = {}

    async def update_reply(self, reply_id: str, shown: tuple[ShownMessage, ...]) -> None:
        await asyncio.sleep(0.03)
        await super().update_reply(reply_id, shown)
        self.texts.update((m.message_id, m.text) for m in shown)


async def test_a_crash_at_any_moment_finds_a_record_holding_at_least_what_the_screen_shows(monkeypatch):
    """Each edit that adds words is recorded before it is sent: recovery's last edit never takes words away."""
    from hermes_gateway._core.recovery import journal

    monkeypatch.setattr(journal, "INTENT_WAIT", 30.0)  # the bound is for a stuck store; a loaded machine is slow
    ref, store = reference(), SlowWrites()
    behind: list[tuple[str, str]] = []

    def check(chat: Any, call: Any) -> None:  # the moment the person sees this text
        if call.outcome == "ok" and call.kind == "edit":
            held, showing = store.texts.get(call.message_id, ""), call.text.removesuffix(CURSOR.strip()).rstrip()
            if not held.startswith(showing):
                behind.append((held, showing))

    ref.on_call = check
    async with gateway(ref, store):
        assert (await ref.say("1", LONG)).delivered
    edits = [c for c in ref.chat("1").calls if c.kind == "edit" and c.outcome == "ok"]
    assert len(edits) >= 5 and behind == [], behind[:3]
    assert ref.chat("1").screen == [LONG.removeprefix("echo: ")]


class SlowHistory(MemoryStore):
    """A store whose history read waits until the test lets it through (a busy database)."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.history_open = asyncio.Event()
        self.fail = fail

    async def history(self, key: Any, *args: Any, **kwargs: Any) -> Any:
        await self.history_open.wait()
        if self.fail:
            raise RuntimeError("the history could not be read")
        return await super().history(key, *args, **kwargs)


async def test_the_message_is_recorded_before_the_turn_reads_anything():
    ref, store = reference(), SlowHistory()
    async with gateway(ref, store):
        reply = asyncio.ensure_future(ref.say("1", "echo: hello there"))
        # the turn waits for its history: a crash now must still find the message
        await eventually(lambda: bool(store._in_flight), lambda: "no record")
        [record] = await store.replies_in_flight()
        assert record.text == "echo: hello there" and record.shown == ()
        store.history_open.set()
        assert (await reply).delivered
    assert ref.chat("1").screen == ["hello there"]
    assert await store.replies_in_flight() == []


async def test_a_turn_that_fails_before_its_reply_leaves_no_record():
    ref, store = reference(), SlowHistory(fail=True)
    store.history_open.set()
    async with gateway(ref, store):
        await ref.say("1", "echo: hello there")
        await asyncio.sleep(0.2)
    assert await store.replies_in_flight() == []
