"""Reminders people ask for: the built-in ``remind`` tool, ``/reminders`` and ``/cancel ID``.

Opt-in (``tools.reminders: true``). The model calls ``remind`` with the
text and a time (``at``: "17:00" or "2026-12-24T09:00" in
``reminders.timezone``, or ``in``: "10m") and, for a repeating one,
``every`` ("1d"); the reminder is kept in the store for the chat the turn
is answering (:data:`~hermes_gateway._core.messages.turn.TURN`, set by the conversation for each turn), and the
scheduler (:mod:`.scheduler`) delivers it like a schedule, once per firing
across replicas and restarts. ``reminders.max_per_chat`` bounds a chat's
pending reminders; ``reminders.min_every`` how often one may repeat.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable
from zoneinfo import ZoneInfo

from ..errors import HermesError
from ..messages.commands import Command, CommandContext
from ..messages.incoming import Incoming
from ..messages.turn import TURN
from ..store import ConversationKey, StoreError
from ..tools import Tool
from ..settings.outbound import (MAX_DURATION, MAX_DURATION_TEXT, ReminderSettings, format_duration,
                                 parse_duration)
from .timing import local_time

if TYPE_CHECKING:
    from ..conversation import TurnParts


PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "what to remind the person of, e.g. 'call Sam'"},
        "at": {"type": "string", "description": "when: '17:00' (today, or tomorrow if past) or '2026-12-24T09:00', "
                                                "in the bot's time zone"},
        "in": {"type": "string", "description": "or after how long: '10m', '2h', '1d'"},
        "every": {"type": "string", "description": "repeat this often after the first time: '1d', '1w' (optional)"},
    },
    "required": ["text"],
}


class ReminderRefused(HermesError, ValueError):
    """What the model is told instead of a reminder (a time it cannot read, the chat's limit)."""


def reminder_tools(settings: ReminderSettings, clock: Callable[[], float] = time.time) -> list[Tool]:
    """The ``remind`` tool when ``tools.reminders`` is on, else nothing."""
    if not settings.enabled:
        return []

    async def remind(text: str = "", at: str | None = None, every: str | None = None, **more: Any) -> str:
        turn = TURN.get()
        if turn is None:
            return "Reminders can only be set from a chat."
        parts, incoming = turn
        try:
            return await add_reminder(parts, incoming, text, at, more.get("in"), every, clock())
        except ReminderRefused as exc:
            return f"No reminder set: {exc}"

    return [Tool("remind", "Set a reminder for this chat: a one-off (at or in) or repeating (every) message the "
                           "bot will send at that time.", remind, PARAMETERS)]


async def add_reminder(parts: "TurnParts", incoming: Incoming, text: str, at: str | None, after: str | None,
                       every: str | None, now: float) -> str:
    """Keep one reminder for ``incoming``'s chat; the line the model reads back."""
    settings: ReminderSettings = parts.config.outbound.reminders
    text = (text or "").strip()
    if not text:
        raise ReminderRefused("say what to remind of (text)")
    first = when(at, after, now, settings.timezone)
    repeat = None
    if every:
        repeat = parse_duration(every)
        if repeat is None:
            raise ReminderRefused(f"'every' takes a duration like 1h or 1d, at most {MAX_DURATION_TEXT}, "
                                  f"got {every!r}")
        if repeat < settings.min_every:
            raise ReminderRefused(f"a reminder may repeat at most every {format_duration(settings.min_every)}")
    shown = local_time(first, settings.timezone)  # before storing: nothing is kept that cannot be shown
    try:
        reminder = await parts.store().add_reminder(incoming.platform, incoming.chat_id, incoming.thread_id,
                                                    text[:500], first, repeat, now, settings.max_per_chat)
    except StoreError:
        raise ReminderRefused("the reminders cannot be stored just now") from None
    if reminder is None:
        raise ReminderRefused(f"this chat already has {settings.max_per_chat} reminders (/reminders, /cancel ID)")
    parts.wake_scheduler()
    repeating = f", then every {format_duration(repeat)}" if repeat else ""
    return f"Reminder {reminder.id} set for {shown}{repeating}: {text}"


def when(at: str | None, after: str | None, now: float, zone: str) -> float:
    """The first firing: ``in`` a duration from now, or ``at`` a local time (today, else tomorrow) or date-time;
    at most :data:`MAX_DURATION` (10 years) ahead."""
    if after:
        seconds = parse_duration(after)
        if seconds is None:
            raise ReminderRefused(f"'in' takes a duration like 10m or 2h, at most {MAX_DURATION_TEXT}, "
                                  f"got {after!r}")
        return now + seconds
    if not at:
        raise ReminderRefused("say when: 'at' (17:00 or 2026-12-24T09:00) or 'in' (10m)")
    tz = ZoneInfo(zone)
    local_now = datetime.fromtimestamp(now, tz=timezone.utc).astimezone(tz)
    text = at.strip()
    try:
        clock = datetime.strptime(text, "%H:%M")
    except ValueError:
        clock = None
    if clock is not None:
        target = local_now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
        if target.timestamp() <= now:
            target = (local_now + timedelta(days=1)).replace(hour=clock.hour, minute=clock.minute, second=0,
                                                             microsecond=0)
        return target.timestamp()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ReminderRefused(f"'at' takes 17:00 or 2026-12-24T09:00, got {at!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    try:
        at_seconds = moment.timestamp()
    except (OverflowError, OSError, ValueError):
        at_seconds = float("inf")
    if at_seconds <= now:
        raise ReminderRefused(f"{text} has already passed")
    if at_seconds - now > MAX_DURATION:
        raise ReminderRefused(f"{text} is more than {MAX_DURATION_TEXT} ahead")
    return at_seconds


# ---------------------------------------------------------------- /reminders and /cancel


async def _list(ctx: CommandContext) -> str:
    incoming = ctx.incoming
    zone = ctx.config.outbound.reminders.timezone
    try:
        pending = await ctx.runtime.parts.store().reminders(ConversationKey(incoming.platform, incoming.chat_id,
                                                                            incoming.thread_id))
    except StoreError:
        return "⚠️ The reminders cannot be read just now."
    if not pending:
        return "No reminders in this chat."
    lines = ["Reminders:"]
    for r in pending:
        repeat = f" (every {format_duration(r.every)})" if r.every else ""
        lines.append(f"{r.id}. {_shown(r.next_at, zone)}{repeat} — {r.text}")
    lines.append("Cancel one with /cancel ID.")
    return "\n".join(lines)


def _shown(at: float, zone: str) -> str:
    """``local_time``, or the raw instant for one no calendar holds (a reminder stored before delays were bounded)."""
    try:
        return local_time(at, zone)
    except (OverflowError, OSError, ValueError):
        return f"at {at:g}"


#: The largest id a store holds (SQLite's and PostgreSQL's 64-bit integers); past it no reminder has that id.
MAX_ID = 2 ** 63 - 1


async def _cancel(ctx: CommandContext) -> str:
    arg = ctx.args.strip().lstrip("#")
    if not arg.isascii() or not arg.isdigit():
        return "Usage: /cancel ID (see /reminders)"
    if len(arg) > 19 or int(arg) > MAX_ID:
        return f"No reminder {arg[:30]} in this chat (see /reminders)."
    incoming = ctx.incoming
    try:
        gone = await ctx.runtime.parts.store().cancel_reminder(
            ConversationKey(incoming.platform, incoming.chat_id, incoming.thread_id), int(arg))
    except StoreError:
        return "⚠️ The reminders cannot be changed just now."
    return f"🗑 Reminder {arg} cancelled." if gone else f"No reminder {arg} in this chat (see /reminders)."


def reminder_commands(settings: ReminderSettings) -> tuple[Command, ...]:
    """``/reminders`` and ``/cancel`` when ``tools.reminders`` is on."""
    if not settings.enabled:
        return ()
    return (Command("reminders", "list this chat's reminders", _list),
            Command("cancel", "cancel a reminder (/cancel ID)", _cancel))
