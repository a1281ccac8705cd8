"""The approval desk: one answer per question, only from the allowed person; the rest changes nothing."""

from __future__ import annotations

import asyncio

from hermes_gateway._core.approvals.desk import APPROVE, DENY, NOT_OPEN, ApprovalDesk


def asker_only(platform: str, user: str) -> bool:
    return (platform, user) == ("telegram", "7")


async def test_the_first_allowed_answer_decides_and_later_presses_change_nothing():
    desk = ApprovalDesk()
    q = desk.open("telegram", "42", "shell_run", asker_only, "the person who asked")
    assert desk.answer("telegram", "42", "8", q.question_id, APPROVE) == "⛔ Only the person who asked can answer this."
    assert not q.decided.done()
    assert desk.answer("telegram", "42", "7", q.question_id, DENY) == "❌ Denied."
    assert desk.answer("telegram", "42", "7", q.question_id, APPROVE) == NOT_OPEN  # a double click
    assert await q.decided == (DENY, "7")


async def test_a_press_in_another_chat_or_platform_or_with_an_unknown_option_is_not_an_answer():
    desk = ApprovalDesk()
    q = desk.open("telegram", "42", "shell_run", asker_only, "x")
    assert desk.answer("telegram", "43", "7", q.question_id, APPROVE) == NOT_OPEN
    assert desk.answer("discord", "42", "7", q.question_id, APPROVE) == NOT_OPEN
    assert desk.answer("telegram", "42", "7", q.question_id, "maybe") == NOT_OPEN
    assert desk.answer("telegram", "42", "7", "nope", APPROVE) == NOT_OPEN
    assert not q.decided.done()


async def test_a_closed_question_is_no_longer_open_and_its_waiter_is_released():
    desk = ApprovalDesk()
    q = desk.open("telegram", "42", "shell_run", asker_only, "x")
    desk.close(q)
    assert len(desk) == 0 and q.decided.cancelled()
    assert desk.answer("telegram", "42", "7", q.question_id, APPROVE) == NOT_OPEN
    await asyncio.sleep(0)
