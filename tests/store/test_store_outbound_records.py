"""Schedules' last runs and reminders, on every backend: memory, SQLite and a real PostgreSQL.

The claims are what makes an occurrence run once: of two stores on one
database (two replicas) claiming the same occurrence at once, exactly one
wins; and a reopened store (a restart) still knows what ran.
"""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway._core.store import ConversationKey

CHAT = ConversationKey("telegram", "42")
THREAD = ConversationKey("telegram", "42", "7")
NOW = 1_700_000_000.0




@pytest.fixture
async def store(make_store):
    s = make_store()
    yield s
    await s.close()


async def test_a_schedule_run_is_claimed_once_and_only_forward(store):
    assert await store.schedule_last_run("morning") is None
    assert await store.claim_schedule_run("morning", NOW) is True
    assert await store.claim_schedule_run("morning", NOW) is False, "the same occurrence twice"
    assert await store.claim_schedule_run("morning", NOW - 60) is False, "an older occurrence"
    assert await store.claim_schedule_run("morning", NOW + 60) is True
    assert await store.schedule_last_run("morning") == NOW + 60
    assert await store.schedule_last_run("evening") is None


async def test_two_replicas_claiming_one_occurrence_at_once_one_wins(make_store):
    stores = [make_store(), make_store()]
    try:
        for occurrence in range(5):
            results = await asyncio.gather(*(s.claim_schedule_run("tick", NOW + occurrence) for s in stores))
            assert sorted(results) == [False, True], occurrence
    finally:
        for s in stores:
            await s.close()


async def test_what_ran_is_known_after_a_restart(make_store):
    first = make_store()
    await first.claim_schedule_run("morning", NOW)
    reminder = await first.add_reminder("telegram", "42", None, "call Sam", NOW + 60, None, NOW, 5)
    await first.close()
    second = make_store()
    try:
        assert await second.schedule_last_run("morning") == NOW
        assert [r.text for r in await second.reminders(CHAT)] == ["call Sam"]
        assert (await second.reminders(CHAT))[0].id == reminder.id
    finally:
        await second.close()


async def test_reminders_are_per_chat_limited_listed_soonest_first_and_cancelled(store):
    later = await store.add_reminder("telegram", "42", None, "stretch", NOW + 600, 3600.0, NOW, 2)
    sooner = await store.add_reminder("telegram", "42", None, "tea", NOW + 60, None, NOW, 2)
    assert await store.add_reminder("telegram", "42", None, "one too many", NOW, None, NOW, 2) is None
    in_thread = await store.add_reminder("telegram", "42", "7", "thread", NOW + 30, None, NOW, 2)
    assert [r.text for r in await store.reminders(CHAT)] == ["tea", "stretch"]
    assert [r.text for r in await store.reminders(THREAD)] == ["thread"]
    assert (await store.reminders(CHAT))[1].every == 3600.0 and sooner.every is None
    assert await store.next_reminder_at() == NOW + 30
    assert await store.cancel_reminder(THREAD, later.id) is False, "another chat's reminder"
    assert await store.cancel_reminder(CHAT, later.id) is True
    assert await store.cancel_reminder(CHAT, later.id) is False
    assert [r.id for r in await store.reminders(CHAT)] == [sooner.id]
    assert [r.id for r in await store.due_reminders(NOW + 60)] == [in_thread.id, sooner.id]


async def test_a_firing_is_taken_once_then_the_reminder_moves_on_or_goes(store):
    once = await store.add_reminder("telegram", "42", None, "tea", NOW + 60, None, NOW, 5)
    every = await store.add_reminder("telegram", "42", None, "water", NOW + 60, 3600.0, NOW, 5)
    assert await store.advance_reminder(every.id, NOW + 60, NOW + 3660) is True
    assert await store.advance_reminder(every.id, NOW + 60, NOW + 3660) is False, "that firing was taken"
    assert await store.advance_reminder(once.id, NOW + 60, None) is True
    assert await store.advance_reminder(once.id, NOW + 60, None) is False
    assert [(r.text, r.next_at) for r in await store.reminders(CHAT)] == [("water", NOW + 3660)]
    assert await store.due_reminders(NOW + 61) == []
