"""Occurrences: the ``every`` grid, cron in a time zone, DST on both sides, and the last missed one."""

from __future__ import annotations

from datetime import datetime, timezone

from hermes_gateway._core.settings.outbound import Schedule
from hermes_gateway._core.outbound.timing import latest_between, local_time, next_after


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=timezone.utc).timestamp()


def cron(expression: str, zone: str = "Europe/Berlin") -> Schedule:
    return Schedule(name="s", platform="p", chat="c", cron=expression, timezone=zone, text="t")


EVERY_10S = Schedule(name="s", platform="p", chat="c", every=10.0, text="t")


def test_every_is_a_grid_every_replica_computes_alike():
    assert next_after(EVERY_10S, utc(2026, 1, 1, 0, 0, 3)) == utc(2026, 1, 1, 0, 0, 10)
    assert next_after(EVERY_10S, utc(2026, 1, 1, 0, 0, 10)) == utc(2026, 1, 1, 0, 0, 20), "strictly after"
    assert latest_between(EVERY_10S, utc(2026, 1, 1), utc(2026, 1, 1, 0, 1, 5)) == utc(2026, 1, 1, 0, 1)
    assert latest_between(EVERY_10S, utc(2026, 1, 1, 0, 1), utc(2026, 1, 1, 0, 1, 5)) is None


def test_cron_is_local_time_in_winter_and_summer():
    morning = cron("0 8 * * *")
    assert local_time(next_after(morning, utc(2026, 1, 10)), "UTC") == "2026-01-10 07:00 UTC"
    assert local_time(next_after(morning, utc(2026, 7, 10)), "UTC") == "2026-07-10 06:00 UTC"
    assert local_time(next_after(cron("0 8 * * *", "America/New_York"), utc(2026, 7, 10)), "UTC") == \
        "2026-07-10 12:00 UTC"


def test_a_wall_time_the_spring_change_skips_runs_right_after_the_gap():
    night = cron("30 2 * * *")
    assert local_time(next_after(night, utc(2026, 3, 28, 12)), "Europe/Berlin") == "2026-03-29 03:00 CEST"


def test_a_wall_time_the_autumn_change_repeats_runs_once():
    night = cron("30 2 * * *")
    first = next_after(night, utc(2026, 10, 24, 12))
    assert local_time(first, "Europe/Berlin") == "2026-10-25 02:30 CEST"
    assert local_time(next_after(night, first), "Europe/Berlin") == "2026-10-26 02:30 CET"
    assert latest_between(night, first, utc(2026, 10, 25, 12)) is None, "the repeat is no occurrence of its own"


def test_an_hourly_cron_keeps_running_through_the_repeated_hour():
    hourly = cron("0 * * * *")
    at, seen = utc(2026, 10, 24, 23, 30), []
    for _ in range(4):
        at = next_after(hourly, at)
        seen.append(local_time(at, "Europe/Berlin"))
    assert seen == ["2026-10-25 02:00 CEST", "2026-10-25 02:00 CET", "2026-10-25 03:00 CET", "2026-10-25 04:00 CET"]


def test_the_last_missed_cron_occurrence():
    weekdays = cron("0 8 * * 1-5")
    # down from Friday noon to Tuesday noon: the last missed one is Tuesday 08:00
    assert local_time(latest_between(weekdays, utc(2026, 3, 27, 11), utc(2026, 3, 31, 10)), "Europe/Berlin") == \
        "2026-03-31 08:00 CEST"
    assert latest_between(weekdays, utc(2026, 3, 28, 11), utc(2026, 3, 29, 10)) is None, "a weekend"
    exactly = next_after(weekdays, utc(2026, 3, 30))
    assert latest_between(weekdays, utc(2026, 3, 29), exactly) == exactly, "the end itself counts"
