"""``schedules:``, ``tools:`` and ``reminders:``: what loads, and each mistake as one line naming file and key."""

from __future__ import annotations

import pytest

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.settings.outbound import format_duration, parse_duration

GOOD = {"name": "s", "every": "5m", "platform": "telegram", "chat": "1", "text": "hi"}


def error(**sections) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(sections, source="config.yaml", env={})
    return str(caught.value)


def test_defaults_and_a_full_schedule():
    config = parse_config({"schedules": [{**GOOD, "every": None, "cron": "*/15 9-17 * * 1-5",
                                          "timezone": "America/New_York", "thread": 7, "conversation": "chat",
                                          "catch_up": "once", "text": None, "prompt": "Any news?"}]},
                          source="config.yaml", env={})
    [s] = config.outbound.schedules
    assert (s.cron, s.every, s.timezone, s.thread, s.prompt, s.text) == \
        ("*/15 9-17 * * 1-5", None, "America/New_York", "7", "Any news?", None)
    assert (s.conversation, s.catch_up) == ("chat", "once")
    assert parse_config({}, env={}).outbound.reminders.enabled is False


@pytest.mark.parametrize("schedule, expected", [
    ({**GOOD, "cron": "0 8 * * *"}, "config.yaml: schedules[0]: exactly one of cron (\"0 8 * * 1-5\") or every "
                                    "(\"30m\") (schedule s)"),
    ({**GOOD, "every": "soon"}, "config.yaml: schedules[0].every: a duration like 10s, 30m, 2h or 1d, above 0s and at most 10 years (3650d), got 'soon'"),
    ({**GOOD, "timezone": "Berlin"}, "config.yaml: schedules[0].timezone: an IANA time zone like Europe/Berlin or "
                                     "UTC, got 'Berlin'"),
    ({**GOOD, "prompt": "also"}, "config.yaml: schedules[0]: exactly one of prompt (run through the agent) or text "
                                 "(sent as is) (schedule s)"),
    ({**GOOD, "conversation": "old"}, "config.yaml: schedules[0].conversation: one of fresh, chat, got 'old'"),
    ({**GOOD, "catchup": "once"}, "config.yaml: schedules[0].catchup: unknown key; expected one of name, cron, "
                                  "every, timezone, platform, chat, thread, prompt, text, conversation, catch_up "
                                  "(did you mean catch_up?)"),
    ({**GOOD, "chat": None}, "config.yaml: schedules[0].chat: the chat to deliver into (schedule s)"),
    ({**GOOD, "name": "two words"}, "config.yaml: schedules[0].name: a name of letters, digits, '_', '.', ':' or "
                                    "'-', got 'two words'"),
])
def test_each_schedule_mistake_is_one_line(schedule, expected):
    assert error(schedules=[schedule]) == expected


def test_two_schedules_with_one_name_are_refused():
    assert error(schedules=[GOOD, GOOD]) == "config.yaml: schedules[1].name: a name no other schedule has, got 's' twice"


def test_reminder_mistakes_are_one_line():
    assert error(tools={"reminders": "maybe"}) == "config.yaml: tools.reminders: true or false, got 'maybe'"
    assert error(reminders={"max_per_chat": 0}) == "config.yaml: reminders.max_per_chat: a whole number from 1 to 10,000, got 0"
    assert error(reminders={"min_every": "often"}) == ("config.yaml: reminders.min_every: a duration like 1m or 1h, "
                                                       "from 1s to 10 years (3650d), got 'often'")


def test_durations():
    assert [parse_duration(d) for d in ("10s", "30m", "1.5h", "2d", "1w", 45, "0s", "-1m", True, "m")] == \
        [10, 1800, 5400, 172800, 604800, 45, None, None, None, None]
    assert [format_duration(s) for s in (10, 1800, 5400, 86400, 90.5)] == ["10s", "30m", "90m", "1d", "90.5s"]
