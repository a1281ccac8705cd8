"""Each platform's state as the dashboard reads it: lifecycle, receive mode, last error (secrets masked), 429s."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_gateway._core.platform_status import RATE_LIMIT_WINDOW, PlatformStatuses, receive_mode
from hermes_gateway._core.secrets import protect


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_start_and_stop_are_recorded_with_their_times():
    clock = Clock()
    statuses = PlatformStatuses(clock)
    assert statuses.get("telegram").running is False
    statuses.started("telegram")
    clock.now = 1005.0
    statuses.stopped("telegram")
    status = statuses.get("telegram")
    assert (status.running, status.started_at, status.stopped_at) == (False, 1000.0, 1005.0)


def test_429s_are_counted_for_the_last_hour_only():
    clock = Clock()
    statuses = PlatformStatuses(clock)
    statuses.rate_limited("slack")
    clock.now += RATE_LIMIT_WINDOW - 1
    statuses.rate_limited("slack")
    status = statuses.get("slack")
    assert status.rate_limited_since(clock.now - 3600) == 2
    clock.now += 2
    assert status.rate_limited_since(clock.now - 3600) == 1
    statuses.rate_limited("slack")  # recording prunes what is older than the window
    assert len(status.rate_limited_at) == 2


def test_the_last_error_is_one_line_with_registered_secrets_masked():
    protect("xoxb-secret-token-123456")
    statuses = PlatformStatuses(Clock())
    before = statuses.version
    statuses.failed("slack", "on_delta: invalid_auth for xoxb-secret-token-123456\nTraceback ...")
    status = statuses.get("slack")
    assert status.last_error.startswith("on_delta: invalid_auth for ") and "xoxb-secret-token-123456" not in status.last_error
    assert "\n" not in status.last_error and status.last_error_at == 1000.0 and statuses.version > before


@dataclass
class Settings:
    mode: str = "polling"


def test_the_receive_mode_is_the_settings_mode_else_webhook_or_socket():
    assert receive_mode(Settings("webhook"), False) == "webhook"
    assert receive_mode(Settings("socket"), True) == "socket"
    assert receive_mode(object(), True) == "webhook"
    assert receive_mode(object(), False) == "socket"  # settings, no mode, no route: a connection of its own
    assert receive_mode(None, False) == "in-process"  # no settings at all: nothing to connect to
