"""The plugin's own count of chat.startStream calls: at most 20 in any 60 seconds, counted as Slack does."""

from __future__ import annotations

from hermes_slack.starts import StartWindow


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_21st_start_in_a_minute_is_refused_and_a_place_frees_60s_after_slack_answered():
    clock = Clock()
    window = StartWindow(clock=clock)
    first = window.take()
    assert first is not None
    clock.now += 2.0
    window.answered(first)          # Slack answered 2 s later: counted from then
    clock.now += 1.0
    others = [window.take() for _ in range(19)]
    assert all(s is not None for s in others)
    assert window.take() is None, "a 21st start within the minute"
    clock.now = 1060.0 + 1.5         # over 60 s after the first was sent, not yet after it was answered
    assert window.take() is None
    clock.now = 1062.0               # 60 s after the first answer
    assert window.take() is not None
    assert window.take() is None, "only one place freed"


def test_a_smaller_limit_is_honoured_the_same_way():
    clock = Clock()
    window = StartWindow(2, period=10.0, clock=clock)
    assert window.take() and window.take() and window.take() is None
    clock.now += 10.0
    assert window.take() and window.take() and window.take() is None
