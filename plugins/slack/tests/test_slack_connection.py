"""The Socket Mode watch: each change of slack_sdk's ``is_connected()`` is reported once, through the context."""

from __future__ import annotations

import asyncio

from hermes_gateway import PlatformContext
from hermes_slack.connection import DOWN, SocketWatch


class FakeSocketClient:
    """Stands in for slack_sdk's Socket Mode client: only ``is_connected()``, as a test sets it."""

    def __init__(self) -> None:
        self.up = True

    async def is_connected(self) -> bool:
        return self.up


async def until(condition) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


async def test_each_change_is_reported_once_and_nothing_after_stop():
    reports = []
    context = PlatformContext("slack", receive=lambda incoming: None,
                              connection=lambda name, up, error: reports.append((up, error)))
    client = FakeSocketClient()
    watch = SocketWatch(client, context, up=True, interval=0.01)
    watch.start()
    await asyncio.sleep(0.05)
    assert reports == [], "already reported as connected: not repeated"
    client.up = False
    await until(lambda: reports == [(False, DOWN)])
    await asyncio.sleep(0.05)
    client.up = True
    await until(lambda: reports == [(False, DOWN), (True, None)])
    await watch.stop()
    client.up = False
    await asyncio.sleep(0.05)
    assert reports == [(False, DOWN), (True, None)] and context.connection == "connected"


async def test_a_client_that_fails_to_answer_is_reported_down_with_why():
    class Closing(FakeSocketClient):
        async def is_connected(self) -> bool:
            raise RuntimeError("session closed")

    context = PlatformContext("slack", receive=lambda incoming: None)
    watch = SocketWatch(Closing(), context, up=None, interval=0.01)
    watch.start()
    await until(lambda: context.connection == "disconnected")
    await watch.stop()
    assert context.connection_error == "Socket Mode: RuntimeError: session closed"
