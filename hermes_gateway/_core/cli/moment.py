"""Moments as a person says them, for the chat's "continuing ..." line and ``hermes-gateway history``."""

from __future__ import annotations

import time


def when(timestamp: float, now: float | None = None) -> str:
    """A moment as a person says it: "today at 14:03", "yesterday at 09:12", "2026-11-02 at 18:40"."""
    moment, today = time.localtime(timestamp), time.localtime(now if now is not None else time.time())
    clock = time.strftime("%H:%M", moment)
    days = _day_number(today) - _day_number(moment)
    if days == 0:
        return f"today at {clock}"
    if days == 1:
        return f"yesterday at {clock}"
    return f"{time.strftime('%Y-%m-%d', moment)} at {clock}"


def _day_number(t: time.struct_time) -> int:
    return int(time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 12, 0, 0, 0, 0, -1)) // 86400)

