"""``PlatformContext.report_connected/report_disconnected``: what a client says of its connection reaches the
gateway's record, and the context keeps it too (for the test kit and clients built without a gateway)."""

from __future__ import annotations

from hermes_gateway import PlatformContext


def test_reports_are_kept_and_handed_on():
    seen = []
    context = PlatformContext("telegram", receive=lambda incoming: None,
                              connection=lambda *report: seen.append(report))
    assert (context.connection, context.connection_error) == (None, None)
    context.report_disconnected("getUpdates failed: TimedOut")
    assert (context.connection, context.connection_error) == ("disconnected", "getUpdates failed: TimedOut")
    context.report_connected()
    assert (context.connection, context.connection_error) == ("connected", None)
    assert seen == [("telegram", False, "getUpdates failed: TimedOut"), ("telegram", True, None)]


def test_without_a_gateway_a_report_is_only_kept():
    context = PlatformContext("web", receive=lambda incoming: None)
    context.report_disconnected("")
    assert (context.connection, context.connection_error) == ("disconnected", "disconnected")
