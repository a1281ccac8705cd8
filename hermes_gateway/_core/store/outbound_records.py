"""What the store keeps for the gateway speaking first: each schedule's last run, and people's reminders.

Beside the conversations (SQLite, memory or PostgreSQL), so a restart knows
which occurrence of a schedule already ran and which reminders are pending.
Both writes that decide "this one runs now" are compare-and-set in one
transaction (:meth:`OutboundRecords.claim_schedule_run`,
:meth:`OutboundRecords.advance_reminder`): of two replicas sharing the
database, exactly one wins each occurrence.

:class:`OutboundRecords` is the seam; the memory backend is here,
:mod:`.outbound_sqlite` and :mod:`.outbound_postgres` the others, and one
contract test module runs against all three.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # base.py imports this module
    from .base import ConversationKey


@dataclass(frozen=True, slots=True)
class Reminder:
    """One reminder a person asked for: what to say, into which chat, when next, and how often after."""

    id: int
    platform: str
    chat_id: str
    thread_id: str | None
    text: str
    next_at: float          # Unix time of the next firing
    every: float | None     # seconds between firings; None: once
    created: float


class OutboundRecords:
    """Schedules' last runs and reminders; a backend that does not keep them says so in one line."""

    location: str = "(store)"

    def _not_kept_outbound(self, what: str) -> Any:
        from .base import StoreError

        raise StoreError(f"{self.location}: this store does not keep {what}")

    async def schedule_last_run(self, name: str) -> float | None:
        """The occurrence (Unix time) the schedule last ran or skipped, or None if it never did."""
        return None

    async def claim_schedule_run(self, name: str, at: float) -> bool:
        """Record ``at`` as the schedule's last run if it is later than the one recorded; True if it was.

        One transaction: of several replicas claiming the same occurrence, one gets True.
        """
        return self._not_kept_outbound("schedule runs")

    async def add_reminder(self, platform: str, chat_id: str, thread_id: str | None, text: str, next_at: float,
                           every: float | None, now: float, max_per_chat: int) -> Reminder | None:
        """Keep a new reminder; None when the chat already has ``max_per_chat`` (nothing is added then)."""
        return self._not_kept_outbound("reminders")

    async def reminders(self, key: "ConversationKey") -> list[Reminder]:
        """The chat's pending reminders, the soonest first."""
        return []

    async def due_reminders(self, now: float, limit: int = 100) -> list[Reminder]:
        """Reminders of every chat due at ``now`` or before, the oldest first."""
        return []

    async def next_reminder_at(self) -> float | None:
        """When the soonest pending reminder is due, or None."""
        return None

    async def advance_reminder(self, reminder_id: int, fired_at: float, next_at: float | None) -> bool:
        """The firing due at ``fired_at`` is taken: move the reminder to ``next_at`` (None: remove it).

        Compare-and-set on ``fired_at``: True for the one caller that took this firing, False when another
        replica took it first or the reminder was cancelled.
        """
        return False

    async def cancel_reminder(self, key: "ConversationKey", reminder_id: int) -> bool:
        """Remove one of the chat's reminders; False when the chat has no reminder with that id."""
        return False


class MemoryOutboundRecords(OutboundRecords):
    """The records in dicts (the :class:`~.memory.MemoryStore`'s; kept across ``close()`` like it)."""

    def _outbound(self) -> dict[str, Any]:
        state = self.__dict__.get("_outbound_state")
        if state is None:
            state = self.__dict__["_outbound_state"] = {"runs": {}, "reminders": {}, "next_id": 1}
        return state

    async def schedule_last_run(self, name: str) -> float | None:
        return self._outbound()["runs"].get(name)

    async def claim_schedule_run(self, name: str, at: float) -> bool:
        runs = self._outbound()["runs"]
        if name in runs and runs[name] >= at:
            return False
        runs[name] = at
        return True

    async def add_reminder(self, platform: str, chat_id: str, thread_id: str | None, text: str, next_at: float,
                           every: float | None, now: float, max_per_chat: int) -> Reminder | None:
        state = self._outbound()
        mine = [r for r in state["reminders"].values() if (r.platform, r.chat_id, r.thread_id) ==
                (platform, chat_id, thread_id)]
        if len(mine) >= max_per_chat:
            return None
        reminder = Reminder(state["next_id"], platform, chat_id, thread_id, text, next_at, every, now)
        state["next_id"] += 1
        state["reminders"][reminder.id] = reminder
        return reminder

    async def reminders(self, key: "ConversationKey") -> list[Reminder]:
        return sorted((r for r in self._outbound()["reminders"].values()
                       if (r.platform, r.chat_id, r.thread_id) == (key.platform, key.chat_id, key.thread_id)),
                      key=lambda r: (r.next_at, r.id))

    async def due_reminders(self, now: float, limit: int = 100) -> list[Reminder]:
        due = sorted((r for r in self._outbound()["reminders"].values() if r.next_at <= now),
                     key=lambda r: (r.next_at, r.id))
        return due[:limit]

    async def next_reminder_at(self) -> float | None:
        return min((r.next_at for r in self._outbound()["reminders"].values()), default=None)

    async def advance_reminder(self, reminder_id: int, fired_at: float, next_at: float | None) -> bool:
        reminders = self._outbound()["reminders"]
        reminder = reminders.get(reminder_id)
        if reminder is None or reminder.next_at != fired_at:
            return False
        if next_at is None:
            del reminders[reminder_id]
        else:
            reminders[reminder_id] = replace(reminder, next_at=next_at)
        return True

    async def cancel_reminder(self, key: "ConversationKey", reminder_id: int) -> bool:
        reminders = self._outbound()["reminders"]
        reminder = reminders.get(reminder_id)
        if reminder is None or (reminder.platform, reminder.chat_id, reminder.thread_id) != \
                (key.platform, key.chat_id, key.thread_id):
            return False
        del reminders[reminder_id]
        return True
