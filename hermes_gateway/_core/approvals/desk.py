"""The open approval questions of one gateway: each answered once, and only by the person allowed to.

A question waits in a future; :meth:`ApprovalDesk.answer` resolves it for
the first allowed answer and says what the presser is told. A second press
(a double click, a redelivered webhook) changes nothing ("already
answered"); a press by someone else changes nothing either.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import Callable

APPROVE = "approve"
DENY = "deny"

NOT_OPEN = "This question is no longer open."
NOT_YOURS = "⛔ Only {who} can answer this."


def outcome_line(option: str) -> str:
    """What the person whose press decided is told."""
    return "✅ Approved." if option == APPROVE else "❌ Denied."


@dataclass
class Question:
    """One tool call waiting for a yes or no."""

    question_id: str
    platform: str
    chat_id: str
    tool: str
    may_answer: Callable[[str, str], bool]   # (platform, user_id) -> allowed?
    who: str                                   # "the person who asked" / "an admin", for the notice
    decided: asyncio.Future[tuple[str, str]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ApprovalDesk:
    """The questions waiting in this gateway, by id."""

    def __init__(self) -> None:
        self._open: dict[str, Question] = {}

    def open(self, platform: str, chat_id: str, tool: str, may_answer: Callable[[str, str], bool],
             who: str) -> Question:
        question_id = secrets.token_hex(3)
        while question_id in self._open:
            question_id = secrets.token_hex(3)
        question = Question(question_id, platform, str(chat_id), tool, may_answer, who)
        self._open[question_id] = question
        return question

    def close(self, question: Question) -> None:
        """Forget ``question`` (answered, timed out or stopped); later presses get :data:`NOT_OPEN`."""
        if self._open.get(question.question_id) is question:
            del self._open[question.question_id]
        if not question.decided.done():
            question.decided.cancel()

    def answer(self, platform: str, chat_id: str, user_id: str, question_id: str, option: str) -> str:
        """Record one press; returns the line the presser sees."""
        question = self._open.get(question_id)
        if question is None or question.platform != platform or question.chat_id != str(chat_id) \
                or question.decided.done():
            return NOT_OPEN
        if option not in (APPROVE, DENY):
            return NOT_OPEN
        if not question.may_answer(platform, str(user_id)):
            return NOT_YOURS.format(who=question.who)
        question.decided.set_result((option, str(user_id)))
        return outcome_line(option)

    def get(self, question_id: str) -> Question | None:
        """The open question ``question_id`` of this gateway, if it waits here."""
        return self._open.get(question_id)

    def resolve(self, question_id: str, option: str, user_id: str) -> None:
        """An answer decided elsewhere (another replica, already checked): wake the question if it waits here."""
        question = self._open.get(question_id)
        if question is not None and not question.decided.done():
            question.decided.set_result((option, str(user_id)))

    def __len__(self) -> int:
        return len(self._open)
