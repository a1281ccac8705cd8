"""When a schedule's occurrences are: ``cron`` in its time zone (croniter), or ``every`` on a fixed grid.

Occurrences are instants (Unix seconds) every replica computes alike with
no talking: an ``every`` schedule's are the multiples of its interval
since the Unix epoch, a cron schedule's are croniter's, evaluated in the
schedule's time zone, so "0 8 * * *" is 08:00 local time on both sides of
a DST change. A wall time the spring change skips runs at the first instant
after the gap (02:30 becomes 03:00 that day); a wall time the autumn change
repeats runs once, at its first occurrence, when the schedule names its
hours (a schedule of every hour or finer keeps running through the
repeated hour, as it should).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from ..settings.outbound import Schedule

#: At most this many missed occurrences are looked at when catching up (a long outage of a 1 s schedule).
MAX_SCAN = 100_000


def next_after(schedule: Schedule, after: float) -> float:
    """The first occurrence strictly after ``after`` (Unix seconds)."""
    if schedule.every is not None:
        step = schedule.every
        return (math.floor(after / step) + 1) * step
    from croniter import croniter

    zone = ZoneInfo(schedule.timezone)
    start = datetime.fromtimestamp(after, tz=timezone.utc).astimezone(zone)
    cron = _cron(schedule)
    runs = croniter(cron, start)
    fixed_hours = not cron.split()[1].startswith("*")
    while True:
        at = float(runs.get_next(float))
        if not (fixed_hours and _repeated(at, zone)):
            return at


def _repeated(at: float, zone: ZoneInfo) -> bool:
    """Whether ``at`` is the second time its wall time happens that night (the hour the autumn change repeats)."""
    return datetime.fromtimestamp(at, tz=zone).fold == 1


def latest_between(schedule: Schedule, after: float, until: float) -> float | None:
    """The last occurrence in ``(after, until]``, or None when there is none."""
    if schedule.every is not None:
        step = schedule.every
        last = math.floor(until / step) * step
        return last if last > after else None
    from croniter import croniter

    zone = ZoneInfo(schedule.timezone)
    end = datetime.fromtimestamp(until, tz=timezone.utc).astimezone(zone)
    cron = _cron(schedule)
    runs = croniter(cron, end)
    fixed_hours = not cron.split()[1].startswith("*")
    while True:
        previous = float(runs.get_prev(float))
        if not (fixed_hours and _repeated(previous, zone)):
            break
    if next_after(schedule, previous) <= until:  # `until` itself is an occurrence (get_prev is strictly before)
        previous = next_after(schedule, previous)
    return previous if previous > after else None


def local_time(at: float, zone: str) -> str:
    """``2026-03-29 08:00 CEST``: how listings show an instant."""
    return datetime.fromtimestamp(at, tz=timezone.utc).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")


def _cron(schedule: Schedule) -> str:
    """The cron expression of a schedule without ``every`` (the settings give each schedule one of the two)."""
    if schedule.cron is None:
        raise ValueError(f"schedule {schedule.name!r} has neither every nor cron")
    return schedule.cron
