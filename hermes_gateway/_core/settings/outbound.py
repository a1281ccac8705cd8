"""``schedules:``, ``tools:`` (``tools.reminders``) and ``reminders:`` of config.yaml.

Parsed with the config's own parser (every mistake one line naming the
file, the key and what was expected); a schedule's cron expression and
time zone are checked here, at load time, not when the first occurrence
is due. Like :mod:`.operator`, this module does not import the
config module at run time (the config module imports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

#: The top-level keys of config.yaml this module parses.
OUTBOUND_KEYS = ("schedules", "tools", "reminders")
CONVERSATIONS = ("fresh", "chat")
CATCH_UPS = ("skip", "once")
_SCHEDULE_KEYS = ("name", "cron", "every", "timezone", "platform", "chat", "thread", "prompt", "text",
                  "conversation", "catch_up")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d|w)?\s*", re.IGNORECASE)
_UNIT_SECONDS = {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class Schedule:
    """One ``schedules[i]`` entry: when (``cron`` or ``every``), where, and what (a ``prompt`` or a ``text``)."""

    name: str
    platform: str
    chat: str
    cron: str | None = None
    every: float | None = None          # seconds
    timezone: str = "UTC"
    thread: str | None = None
    prompt: str | None = None
    text: str | None = None
    conversation: str = "fresh"         # fresh: no history, nothing recorded; chat: the chat's conversation
    catch_up: str = "skip"              # what a start does about occurrences missed while down

    @property
    def when(self) -> str:
        """How the listing shows the rule: ``cron 0 8 * * 1-5 (Europe/Berlin)`` or ``every 30m``."""
        if self.cron is not None:
            return f"cron {self.cron} ({self.timezone})"
        return f"every {format_duration(self.every or 0)}"


@dataclass(frozen=True)
class ReminderSettings:
    """``tools.reminders`` (opt-in) and ``reminders:``: limits per chat, the time zone times are read in."""

    enabled: bool = False
    max_per_chat: int = 10
    min_every: float = 60.0             # a repeating reminder fires at most this often
    timezone: str = "UTC"


@dataclass(frozen=True)
class OutboundSettings:
    """Everything this package reads from the config."""

    schedules: tuple[Schedule, ...] = ()
    reminders: ReminderSettings = field(default_factory=ReminderSettings)


#: The longest duration anything here takes (a reminder's delay or repeat, a schedule's ``every``): 10 years.
#: Past it an instant no longer fits the store's or the clock's types (a delay of 99999999999999d overflowed).
MAX_DURATION = 10 * 365 * 86400.0
MAX_DURATION_TEXT = "10 years (3650d)"


def parse_duration(text: Any, maximum: float = MAX_DURATION) -> float | None:
    """``"30m"`` -> 1800.0, ``"10s"``, ``"1.5h"``, ``"2d"``, or a number of seconds; None if not a duration
    above 0 and at most ``maximum`` (nan and infinities are not durations)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        seconds = float(text)
    elif isinstance(text, str):
        match = _DURATION.fullmatch(text)
        if match is None:
            return None
        seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "").lower() or None]
    else:
        return None
    return seconds if 0 < seconds <= maximum else None  # false for nan


def format_duration(seconds: float) -> str:
    """The shortest of ``2d``, ``3h``, ``30m``, ``10s`` that says it exactly."""
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def parse_outbound_sections(p: Any, data: Mapping[str, Any]) -> OutboundSettings:
    """The three sections of ``data`` (the whole config mapping), validated with the config parser ``p``."""
    return OutboundSettings(schedules=_schedules(p, data.get("schedules")),
                            reminders=_reminders(p, data.get("tools"), data.get("reminders")))


def _schedules(p: Any, value: Any) -> tuple[Schedule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise p.fail("schedules", f"a list of schedules ({{name, cron | every, platform, chat, prompt | text}}), "
                                  f"got {type(value).__name__}")
    out: list[Schedule] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        key = f"schedules[{i}]"
        p.number(f"{key}.every", "duration", 0, MAX_DURATION)
        sec = p.section(item, key, _SCHEDULE_KEYS)
        if not isinstance(item, dict) or not item:
            raise p.fail(key, "a mapping with name, cron or every, platform, chat, and prompt or text")
        name = sec.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise p.fail(f"{key}.name", f"a name of letters, digits, '_', '.', ':' or '-', got {name!r}")
        if name in seen:
            raise p.fail(f"{key}.name", f"a name no other schedule has, got {name!r} twice")
        seen.add(name)
        for required in ("platform", "chat"):
            if sec.get(required) in (None, ""):
                raise p.fail(f"{key}.{required}", f"the {required} to deliver into (schedule {name})")
        timezone = p.get(sec, key, "timezone", "str", "UTC")
        _check_timezone(p, f"{key}.timezone", timezone)
        cron, every = sec.get("cron"), sec.get("every")
        if (cron is None) == (every is None):
            raise p.fail(key, f"exactly one of cron (\"0 8 * * 1-5\") or every (\"30m\") (schedule {name})")
        if cron is not None:
            cron = p.check(cron, f"{key}.cron", "str").strip()
            _check_cron(p, f"{key}.cron", cron)
        seconds = None
        if every is not None:
            seconds = parse_duration(every)
            if seconds is None:
                raise p.fail(f"{key}.every", f"a duration like 10s, 30m, 2h or 1d, above 0s and at most "
                                             f"{MAX_DURATION_TEXT}, got {every!r}")
        prompt, text = sec.get("prompt"), sec.get("text")
        if (prompt is None) == (text is None):
            raise p.fail(key, f"exactly one of prompt (run through the agent) or text (sent as is) (schedule {name})")
        body = p.check(prompt if prompt is not None else text, f"{key}.{'prompt' if prompt is not None else 'text'}",
                       "str")
        if not body.strip():
            raise p.fail(f"{key}.{'prompt' if prompt is not None else 'text'}", "a non-empty string")
        thread = sec.get("thread")
        out.append(Schedule(
            name=name, platform=str(sec["platform"]), chat=str(sec["chat"]), cron=cron, every=seconds,
            timezone=timezone, thread=None if thread is None else str(thread),
            prompt=body if prompt is not None else None, text=body if text is not None else None,
            conversation=p.get(sec, key, "conversation", "str", "fresh", choices=CONVERSATIONS),
            catch_up=p.get(sec, key, "catch_up", "str", "skip", choices=CATCH_UPS)))
    return tuple(out)


def _reminders(p: Any, tools: Any, value: Any) -> ReminderSettings:
    tools_sec = p.section(tools, "tools", ("reminders", "approval"))  # tools.approval: issue 25's
    sec = p.section(value, "reminders", ("max_per_chat", "min_every", "timezone"))
    d = ReminderSettings()
    min_every = d.min_every
    p.number("reminders.min_every", "duration", 1, MAX_DURATION)
    if sec.get("min_every") is not None:
        parsed = parse_duration(sec["min_every"])
        if parsed is None or parsed < 1:
            raise p.fail("reminders.min_every", f"a duration like 1m or 1h, from 1s to "
                                                f"{MAX_DURATION_TEXT}, got {sec['min_every']!r}")
        min_every = parsed
    timezone = p.get(sec, "reminders", "timezone", "str", d.timezone)
    _check_timezone(p, "reminders.timezone", timezone)
    return ReminderSettings(enabled=p.get(tools_sec, "tools", "reminders", "bool", d.enabled),
                            max_per_chat=p.get(sec, "reminders", "max_per_chat", "int", d.max_per_chat, minimum=1,
                                                         maximum=10_000),
                            min_every=min_every, timezone=timezone)


def _check_timezone(p: Any, key: str, name: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise p.fail(key, f"an IANA time zone like Europe/Berlin or UTC, got {name!r}") from None


def _check_cron(p: Any, key: str, expression: str) -> None:
    from croniter import croniter

    if len(expression.split()) != 5 or not croniter.is_valid(expression):
        raise p.fail(key, f"a cron expression of 5 fields (minute hour day month weekday), got {expression!r}")
