"""Reminders set through the demo model's ``tool: remind {...}``: fired once at their time, listed, cancellable."""

from __future__ import annotations

import asyncio
import itertools
import time

from hermes_gateway import Incoming, RateBudget
from hermes_gateway._core.outbound.reminders import when
from hermes_gateway.testing import ReferencePlatform, TestGateway, eventually

_ids = itertools.count(1)


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=200, burst=50)})


def gateway(ref: ReferencePlatform, **sections) -> TestGateway:
    data = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
            "tools": {"reminders": True}, **sections}
    return TestGateway(data, ref)


async def say(gw: TestGateway, chat: str, text: str) -> None:
    n = next(_ids)
    await gw.receive(Incoming("reference", chat, text, sender_id="alice", update_id=f"u{n}", message_id=f"m{n}",
                              mentioned=True))


async def test_a_reminder_set_through_the_demo_model_fires_once_at_its_time():
    ref = reference()
    async with gateway(ref) as gw:
        set_at = time.time()
        await say(gw, "a", 'tool: remind {"text": "call Sam", "in": "2s"}')
        assert "Reminder 1 set for " in ref.chat("a").screen[-1] and "call Sam" in ref.chat("a").screen[-1]
        await eventually(lambda: "⏰ Reminder: call Sam" in ref.chat("a").screen, lambda: ref.chat("a").screen)
        fired_after = time.time() - set_at
        await asyncio.sleep(2.5)   # long enough for a second firing, were there one
        await say(gw, "a", "/reminders")
    screen = ref.chat("a").screen
    assert screen.count("⏰ Reminder: call Sam") == 1
    assert fired_after >= 1.9
    assert screen[-1] == "No reminders in this chat."


async def test_reminders_are_listed_and_cancelled_per_chat():
    ref = reference()
    async with gateway(ref) as gw:
        await say(gw, "a", 'tool: remind {"text": "water the plants", "in": "1h", "every": "1d"}')
        await say(gw, "a", 'tool: remind {"text": "stand-up", "in": "30m"}')
        await say(gw, "b", 'tool: remind {"text": "someone else", "in": "10m"}')
        await say(gw, "a", "/reminders")
        listing = ref.chat("a").screen[-1].splitlines()
        await say(gw, "b", "/cancel 1")
        refused = ref.chat("b").screen[-1]
        await say(gw, "a", "/cancel 2")
        cancelled = ref.chat("a").screen[-1]
        await say(gw, "a", "/reminders")
        after = ref.chat("a").screen[-1].splitlines()
    assert listing[0] == "Reminders:" and listing[-1] == "Cancel one with /cancel ID."
    assert listing[1].startswith("2. ") and listing[1].endswith(" — stand-up")
    assert listing[2].startswith("1. ") and listing[2].endswith(" (every 1d) — water the plants")
    assert refused == "No reminder 1 in this chat (see /reminders)."
    assert cancelled == "🗑 Reminder 2 cancelled."
    assert len(after) == 3 and after[1].endswith("water the plants")


async def test_a_chat_cannot_hold_more_than_max_per_chat():
    ref = reference()
    async with gateway(ref, reminders={"max_per_chat": 2}) as gw:
        for i in range(3):
            await say(gw, "a", f'tool: remind {{"text": "r{i}", "in": "1h"}}')
    assert "this chat already has 2 reminders" in ref.chat("a").screen[-1]


async def test_without_tools_reminders_there_is_no_remind_tool_and_no_commands():
    ref = reference()
    async with TestGateway({"model": {"demo": {"tokens_per_second": 0}},
                            "platforms": {"reference": {"enabled": True}}}, ref) as gw:
        await say(gw, "a", "/reminders")
        await say(gw, "a", "/help")
    assert "/reminders" not in ref.chat("a").screen[-1]
    assert ref.chat("a").screen[0] != "No reminders in this chat."


def test_times_are_read_in_the_reminder_time_zone():
    now = 1_767_268_800.0                     # 2026-01-01 12:00 UTC = 13:00 in Berlin
    assert when("17:00", None, now, "Europe/Berlin") == now + 4 * 3600
    assert when("09:00", None, now, "Europe/Berlin") == now + 20 * 3600          # tomorrow
    assert when("2026-01-02T09:00", None, now, "UTC") == now + 21 * 3600
    assert when(None, "90m", now, "UTC") == now + 5400


async def test_a_delay_past_ten_years_is_refused_and_nothing_is_stored():
    ref = reference()
    async with gateway(ref) as gw:
        for far in ('"in": "99999999999999d"', '"in": "3651d"', '"every": "99999999999999d", "in": "1m"',
                    '"at": "9999-12-31T00:00"'):
            await say(gw, "a", f'tool: remind {{"text": "far", {far}}}')
            assert "No reminder set: " in ref.chat("a").screen[-1], far
            assert "10 years" in ref.chat("a").screen[-1], far
        await say(gw, "a", "/reminders")
    assert ref.chat("a").screen[-1] == "No reminders in this chat."


async def test_cancel_with_a_number_too_large_for_the_store_is_answered(tmp_path):
    ref = reference()
    async with gateway(ref, store={"path": str(tmp_path / "state.db")}) as gw:
        await say(gw, "a", "/cancel 99999999999999999999999")
        answer = ref.chat("a").screen[-1]
    assert answer == "No reminder 99999999999999999999999 in this chat (see /reminders)."


async def test_many_due_reminders_are_all_delivered_in_one_poll():
    """300 reminders due at once (one per chat): all delivered well within one poll (not 100 per poll)."""
    from hermes_gateway._core.outbound.scheduler import POLL

    ref = reference()
    chats = [f"c{i}" for i in range(300)]
    async with gateway(ref) as gw:
        store, now = gw._gateway.store, time.time()
        for chat in chats:
            await store.add_reminder("reference", chat, None, f"due {chat}", now - 1, None, now - 60, 10)
        gw._gateway.scheduler.wake()
        await eventually(lambda: all(ref.chat(c).screen for c in chats),
                         lambda: sum(1 for c in chats if ref.chat(c).screen), timeout=POLL / 2)
    assert all(ref.chat(c).screen == [f"⏰ Reminder: due {c}"] for c in chats)


async def test_a_reminder_stored_too_far_ahead_before_the_bound_is_still_listed(tmp_path):
    """A row an older version stored (next run 8.6e18): /reminders answers, and /cancel removes it."""
    ref = reference()
    async with gateway(ref, store={"path": str(tmp_path / "state.db")}) as gw:
        now = time.time()
        stored = await gw._gateway.store.add_reminder("reference", "a", None, "far", 8.6e18, None, now, 10)
        await say(gw, "a", "/reminders")
        listing = ref.chat("a").screen[-1].splitlines()
        await say(gw, "a", f"/cancel {stored.id}")
        cancelled = ref.chat("a").screen[-1]
    assert listing[0] == "Reminders:" and listing[1].startswith(f"{stored.id}. ") and listing[1].endswith("— far")
    assert cancelled == f"🗑 Reminder {stored.id} cancelled."
