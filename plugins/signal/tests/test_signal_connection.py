"""The daemon goes away and comes back: the dashboard hears of it, the client reconnects, and what arrived in
between is not lost (the daemon's event buffer, asked with Last-Event-ID, also across a gateway restart)."""

from __future__ import annotations

from hermes_gateway.testing import TestGateway
from hermes_signal import plugin
from signal_test_support import ALICE, config, eventually, runner


async def test_daemon_down_is_reported_and_the_client_reconnects_without_losing_a_message(daemon):
    async with runner(daemon) as run:
        context = run.context
        await eventually(lambda: context.connection == "connected", lambda: context.connection)
        daemon.push_message(ALICE, "before")
        await eventually(lambda: len(run.received) == 1, lambda: run.received)
        await daemon.take_down()
        await eventually(lambda: context.connection == "disconnected", lambda: context.connection)
        assert "signal-cli daemon at" in context.connection_error and "\n" not in context.connection_error
        daemon.push_message(ALICE, "while the stream was down")     # the daemon keeps it for a reconnect
        await daemon.bring_back()
        await eventually(lambda: [m.text for m in run.received] == ["before", "while the stream was down"],
                         lambda: run.received)
        assert context.connection == "connected"


async def test_a_restarted_gateway_answers_what_came_while_it_was_down_and_nothing_twice(daemon, tmp_path):
    data = config(daemon)
    data["store"] = {"path": str(tmp_path / "hermes.db")}
    async with TestGateway(data, plugin):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, "echo: one")
        await eventually(lambda: daemon.screen(ALICE) == ["one"], lambda: daemon.screen(ALICE))
    await eventually(lambda: daemon.listening == 0, lambda: daemon.listening)
    daemon.push_message(ALICE, "echo: two")                       # nobody listening: the daemon keeps it
    async with TestGateway(data, plugin):
        await eventually(lambda: daemon.screen(ALICE) == ["one", "two"], lambda: daemon.screen(ALICE))
        daemon.push_message(ALICE, "echo: three")
        await eventually(lambda: daemon.screen(ALICE) == ["one", "two", "three"], lambda: daemon.screen(ALICE))
    assert daemon.violations == []


async def test_a_daemon_down_at_start_is_no_failure_and_a_mention_by_uuid_counts_once_it_is_up(daemon):
    from signal_test_support import GROUP

    daemon.group(GROUP, [ALICE])
    await daemon.take_down()
    async with runner(daemon) as run:
        context = run.context
        await eventually(lambda: context.connection == "disconnected", lambda: context.connection)
        assert run.client.reader.account_uuid is None
        await daemon.bring_back()
        await eventually(lambda: context.connection == "connected", lambda: context.connection_error)
        daemon.push_message(ALICE, "\ufffc hi", group=GROUP, mentions=[{"uuid": daemon.account_uuid, "start": 0,
                                                                        "length": 1}])
        await eventually(lambda: len(run.received) == 1, lambda: run.received)
    assert run.received[0].mentioned and run.received[0].text == "hi"
