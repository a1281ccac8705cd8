"""Taking a button press (or ``/allow``, ``/deny``): the same rules alone and across replicas.

Alone, the gateway's :class:`~.desk.ApprovalDesk` decides. With several
replicas (``coordination.url``) the press may reach a replica other than
the one whose reply waits: the asking replica published the question's
rules (platform, chat, who may answer) in the coordination layer, the
replica that got the press checks them, and the first answer is recorded
there atomically (``SET NX``) and announced, so a double click, a press on
two replicas, or a redelivered webhook still decides exactly once.
"""

from __future__ import annotations

from typing import Any

from .desk import APPROVE, DENY, NOT_OPEN, NOT_YOURS, ApprovalDesk, Question, outcome_line

#: Seconds the shared record of a question outlives its timeout (late presses still get "no longer open").
KEEP_AFTER = 300.0


class Approvals:
    """The approvals of one gateway: its desk of open questions, and the replicas it shares them with.

    Built by the gateway (its composition root) with what it needs: the
    desk, the coordination layer (None or alone: this process decides) and
    the operator's access rules (who is an admin). It hears answers decided
    on other replicas (``coordination.on_choice``).
    """

    def __init__(self, coordination: Any, access: Any, desk: ApprovalDesk | None = None) -> None:
        self.desk = desk or ApprovalDesk()
        self.coordination = coordination
        self.access = access
        if coordination is not None:
            coordination.on_choice = self.desk.resolve

    def _shared(self) -> Any:
        coordination = self.coordination
        return coordination if coordination is not None and coordination.shared else None

    async def publish(self, question: Question, requester: str, who: str, timeout: float) -> None:
        """Make the question answerable on every replica (nothing to do alone)."""
        coordination = self._shared()
        if coordination is not None:
            await coordination.open_choice(question.question_id, {
                "platform": question.platform, "chat_id": question.chat_id, "tool": question.tool,
                "who": who, "requester": requester}, timeout + KEEP_AFTER)

    async def settle(self, question: Question, option: str, user: str) -> tuple[str, str]:
        """Close ``question`` as ``option`` (a timeout's deny) unless another replica decided first: the outcome."""
        coordination = self._shared()
        if coordination is None or await coordination.decide_choice(question.question_id, option, user):
            return option, user
        decided = await coordination.decided_choice(question.question_id)
        return decided if decided is not None else (option, user)

    async def answer(self, platform: str, chat_id: str, user_id: str, question_id: str, option: str) -> str:
        """Record one press; returns the line the presser sees."""
        desk = self.desk
        coordination = self._shared()
        if coordination is None:
            return desk.answer(platform, chat_id, user_id, question_id, option)
        if option not in (APPROVE, DENY):
            return NOT_OPEN
        local = desk.get(question_id)
        if local is not None:
            if local.platform != platform or local.chat_id != str(chat_id) or local.decided.done():
                return NOT_OPEN
            allowed, who = local.may_answer(platform, str(user_id)), local.who
        else:
            meta = await coordination.choice_meta(question_id)
            if meta is None or meta.get("platform") != platform or meta.get("chat_id") != str(chat_id):
                return NOT_OPEN
            if meta.get("who") == "admin":
                allowed = self.access.is_admin(platform, str(user_id))
                who = "an admin"
            else:
                allowed = bool(meta.get("requester")) and meta.get("requester") == str(user_id)
                who = "the person who asked"
        if not allowed:
            return NOT_YOURS.format(who=who)
        if not await coordination.decide_choice(question_id, option, str(user_id)):
            return NOT_OPEN
        desk.resolve(question_id, option, str(user_id))
        return outcome_line(option)
