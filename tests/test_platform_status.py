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


def test_the_state_follows_start_reports_and_stop():
    clock = Clock()
    statuses = PlatformStatuses(clock)
    status = statuses.get("telegram")
    assert status.state() == "stopped"
    statuses.starting("telegram")
    assert status.state() == "starting"
    statuses.started("telegram")
    assert status.state() == "running", "started, and its client said nothing yet: not called connected"
    clock.now = 1002.0
    statuses.report("telegram", True, None)
    assert (status.state(), status.connection_at, status.last_error) == ("connected", 1002.0, None)
    clock.now = 1003.0
    statuses.report("telegram", False, "getUpdates failed: NetworkError: Bad Gateway\nmore")
    assert status.state() == "disconnected"
    assert status.connection_error == status.last_error == "getUpdates failed: NetworkError: Bad Gateway"
    assert status.last_error_at == 1003.0
    statuses.report("telegram", True, None)
    assert (status.state(), status.connection_error) == ("connected", None)
    assert status.last_error == "getUpdates failed: NetworkError: Bad Gateway", "the last error stays to be read"
    statuses.stopped("telegram")
    assert status.state() == "stopped"


def test_a_report_while_not_running_is_not_recorded_and_a_new_start_forgets_the_old_one():
    statuses = PlatformStatuses(Clock())
    statuses.report("discord", False, "websocket closed")  # never started
    status = statuses.get("discord")
    assert (status.state(), status.last_error) == ("stopped", None)
    statuses.starting("discord")
    statuses.report("discord", True, None)  # reported during start(): shown at once
    assert status.state() == "connected"
    statuses.started("discord")
    statuses.stopped("discord")
    statuses.report("discord", False, "the gateway websocket closed")  # closing during the stop is no error
    assert (status.state(), status.last_error) == ("stopped", None)
    statuses.starting("discord")
    assert (status.state(), status.connection) == ("starting", None)


def test_a_start_that_fails_is_stopped_with_its_error():
    statuses = PlatformStatuses(Clock())
    statuses.starting("slack")
    statuses.start_failed("slack", "start failed: OSError: refused")
    status = statuses.get("slack")
    assert (status.state(), status.last_error) == ("stopped", "start failed: OSError: refused")


def test_a_repeated_disconnection_is_no_new_change_and_secrets_are_masked():
    protect("xoxb-secret-token-value")
    statuses = PlatformStatuses(Clock())
    statuses.starting("slack")
    statuses.started("slack")
    statuses.disconnected("slack", "auth failed for xoxb-secret-token-value")
    version = statuses.version
    statuses.disconnected("slack", "auth failed for xoxb-secret-token-value")  # a poll loop backing off
    statuses.connected("slack")
    statuses.connected("slack")
    assert statuses.version == version + 1
    assert "xoxb-secret-token-value" not in (statuses.get("slack").last_error or "")
