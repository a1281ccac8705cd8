"""The gate's per-user limit on its own, on a clock the test moves: a sliding minute, and memory that forgets."""

from __future__ import annotations

from types import SimpleNamespace

from hermes_gateway import Incoming
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.operator.gate import Gate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def gate(limit: int, clock: Clock) -> Gate:
    config = parse_config({"access": {"max_messages_per_minute": limit, "admins": ["boss"]}}, env={})
    metrics = SimpleNamespace(registry=None, inbound_rate_limited=SimpleNamespace(
        labels=lambda **kw: SimpleNamespace(inc=lambda: None)))
    return Gate(config.operator.access, lambda: None, lambda: metrics, clock=clock)


def message(user: str) -> Incoming:
    return Incoming("telegram", "1", "hi", sender_id=user)


def test_the_limit_is_a_sliding_minute_per_user_and_admins_are_not_limited():
    clock = Clock()
    g = gate(2, clock)
    assert [g.over_limit(message("a")) is None for _ in range(3)] == [True, True, False]
    assert g.over_limit(message("b")) is None and g.over_limit(message("boss")) is None
    clock.now += 30
    assert g.over_limit(message("a")) is not None      # the first two are still within the minute
    clock.now += 30.5
    assert g.over_limit(message("a")) is None          # a minute after the first, one fits again


def test_the_polite_line_comes_once_a_minute_and_counts_what_was_skipped():
    clock = Clock()
    g = gate(1, clock)
    g.over_limit(message("a"))
    for _ in range(3):
        g.over_limit(message("a"))
    first = g.notice_due(message("a"))
    assert first is not None and "skipped your last message" in first
    assert g.notice_due(message("a")) is None
    clock.now += 61
    g.over_limit(message("a"))
    g.over_limit(message("a"))
    g.over_limit(message("a"))
    assert "skipped your last messages" in g.notice_due(message("a"))


def test_people_quiet_for_a_minute_are_forgotten():
    clock = Clock()
    g = gate(5, clock)
    for n in range(1000):
        g.over_limit(message(f"user{n}"))
    clock.now += 61
    for _ in range(30):
        g.over_limit(message("late"))
    assert set(g._recent) == {("telegram", "late")}
