"""The loop a running gateway keeps: each schedule's occurrences and each due reminder, run once.

It sleeps until the soonest of: the next occurrence of any schedule, the
next reminder (read from the store), or ``POLL`` seconds (a reminder another
replica added, a clock that jumped). At each instant it claims the
occurrence (:mod:`.claim`) and, if this replica won it, delivers it in a
task of its own, so a slow agent turn never holds the next occurrence up,
through the chat's lane (:func:`~..inbound.runtime.run_in_lane`): never
beside a reply being written there, and under the chat's lease with replicas.

At start, each schedule's last recorded run is read: with ``catch_up: once``
the latest occurrence missed while the gateway was down runs now (once,
however many were missed); with ``skip`` (the default) missed ones are let
go and the next one is waited for.

The clock is injectable (``clock``: Unix seconds) so tests run cron on a
virtual event loop: ``clock=lambda: start + loop.time()``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from ..conversation import TurnParts
from ..store import StoreError
from ..store.outage import report as report_store_failure
from .claim import claim_reminder, claim_schedule
from .deliver import deliver_reminder, deliver_schedule
from .home import resolve_chat
from ..settings.outbound import Schedule
from .timing import latest_between, next_after

if TYPE_CHECKING:
    from ..inbound.runtime import InboundRuntime

log = logging.getLogger(__name__)

#: The longest sleep: reminders other replicas add, and clock jumps, are noticed within it.
POLL = 30.0
#: Due reminders are read this many at a time, and at most this many batches in one pass of the loop.
BATCH, BATCHES = 100, 10


class Scheduler:
    """Fires the config's schedules and the store's reminders while the gateway runs."""

    def __init__(self, parts: TurnParts, inbound: Callable[[], "InboundRuntime"], *,
                 clock: Callable[[], float] = time.time, poll: float = POLL) -> None:
        """``parts``: what a turn uses (built by the gateway); ``inbound()``: the runtime whose chat lanes an
        occurrence is delivered in."""
        self.parts = parts
        self._inbound = inbound
        self.clock = clock
        self.poll = poll
        self.schedules: tuple[Schedule, ...] = parts.config.outbound.schedules
        self.reminders = parts.config.outbound.reminders.enabled
        self.next_run: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._running: set[asyncio.Task[Any]] = set()
        self._tried: set[tuple[int, float]] = set()   # reminder firings this replica asked for (won or lost)

    @property
    def needed(self) -> bool:
        """Whether there is anything to fire: schedules configured, or reminders on."""
        return bool(self.schedules) or self.reminders

    def check(self, platforms: list[str]) -> None:
        """Refuse to start with a schedule whose platform is not running, or whose ``home`` chat is unset."""
        from ..errors import StartError
        from .home import resolve_chat

        for i, schedule in enumerate(self.schedules):
            if schedule.platform not in platforms:
                running = ", ".join(platforms) or "none"
                raise StartError(f"schedules[{i}].platform: {schedule.platform} is not an enabled platform "
                                 f"(running: {running}); schedule {schedule.name} could never be delivered")
            resolve_chat(self.parts.config, schedule.platform, schedule.chat)

    def start(self) -> None:
        if self._task is None and self.needed:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="hermes-scheduler")

    def wake(self) -> None:
        """Look again now (a reminder was just added)."""
        self._wake.set()

    async def stop(self, grace: float = 5.0) -> None:
        """No new occurrences; the ones being delivered get ``grace`` seconds, then are cancelled."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._running:
            done, pending = await asyncio.wait(set(self._running), timeout=grace)
            for left in pending:
                left.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _run(self) -> None:
        started = self.clock()
        for schedule in self.schedules:
            self.next_run[schedule.name] = await self._first(schedule, started)
        while True:
            try:
                wake_at = await self._tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("scheduler: a round failed; trying again")
                wake_at = self.clock() + self.poll
            delay = max(0.0, wake_at - self.clock())
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), delay)
            except asyncio.TimeoutError:
                pass

    async def _first(self, schedule: Schedule, started: float) -> float:
        """The first occurrence to wait for: a missed one under ``catch_up: once``, else the next one."""
        try:
            last = await self.parts.store().schedule_last_run(schedule.name)
        except StoreError as exc:
            report_store_failure(self.parts.store(), log, f"schedule {schedule.name}: last run not read", exc)
            last = None
        if last is not None and schedule.catch_up == "once":
            missed = latest_between(schedule, last, started)
            if missed is not None:
                return missed
        return next_after(schedule, started)

    async def _tick(self) -> float:
        """Run what is due; return when to look again."""
        now = self.clock()
        for schedule in self.schedules:
            at = self.next_run[schedule.name]
            if at <= now:
                self.next_run[schedule.name] = next_after(schedule, max(at, now))
                if await claim_schedule(self.parts.coordination(), self.parts.store(), schedule.name, at):
                    chat = resolve_chat(self.parts.config, schedule.platform, schedule.chat)
                    self.spawn(schedule.platform, chat, schedule.thread,
                                partial(deliver_schedule, self.parts, schedule), f"schedule {schedule.name}")
        wake_at = min([now + self.poll, *self.next_run.values()])
        if self.reminders:
            wake_at = min(wake_at, await self._reminders(now))
        return wake_at

    async def _reminders(self, now: float) -> float:
        """Claim every due reminder, :data:`BATCH` at a time and at most :data:`BATCHES` batches a pass; with
        due ones left (a backlog after an outage), look again at once rather than a poll later (100 per poll
        left the last of 10,000 due reminders ~50 minutes late)."""
        store = self.parts.store()
        more = False
        try:
            for _ in range(BATCHES):
                due = await store.due_reminders(now, BATCH)
                fresh = [r for r in due if (r.id, r.next_at) not in self._tried]
                for reminder in fresh:
                    await self._claim(reminder, now)
                more = len(due) >= BATCH and bool(fresh)  # a full batch of new ones: there may be more
                if not more:
                    break
            soonest = await store.next_reminder_at()
        except StoreError as exc:
            report_store_failure(store, log, "reminders not read", exc)
            return now + self.poll
        if len(self._tried) > 10_000:
            self._tried.clear()
        if more:
            return now  # the next pass right away (after the loop has run what is waiting)
        return now + self.poll if soonest is None or soonest <= now else soonest

    async def _claim(self, reminder: Any, now: float) -> None:
        """Claim one firing of ``reminder`` (moving it to its next time, or ending it) and deliver it if won."""
        self._tried.add((reminder.id, reminder.next_at))
        following = None
        if reminder.every:
            following = reminder.next_at + reminder.every
            while following <= now:  # down for a while: one firing now, the next in the future
                following += reminder.every
        if await claim_reminder(self.parts.coordination(), self.parts.store(), reminder, following):
            self.spawn(reminder.platform, reminder.chat_id, reminder.thread_id,
                       partial(deliver_reminder, self.parts, reminder), f"reminder {reminder.id}")

    def spawn(self, platform: str, chat: str, thread: str | None, delivery: Callable[[], Any], what: str) -> None:
        """Deliver in the chat's lane (after a reply being written there; with replicas, under its lease).

        Also what a hook from outside (:mod:`.hooks`) runs its turn with: stopped with the scheduler, so the
        shutdown grace covers it like an occurrence.
        """
        from ..inbound.runtime import run_in_lane

        async def run() -> None:
            try:
                report = await run_in_lane(self._inbound(), platform, chat, thread, delivery)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: delivery failed", what)
                return
            if report is None:
                log.warning("%s: not delivered (see the error above)", what)
            elif not report.delivered:
                log.warning("%s: not delivered: %s", what, report.error)

        task = asyncio.get_running_loop().create_task(run(), name=f"hermes-{what}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)
